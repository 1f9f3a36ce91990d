// The models scripts/make-model wrote for the tests (KILN_TEST_MODELS), and
// their raw f32 input and expected output files.
#ifndef KILN_TEST_UNIT_GRAPH_MODEL_FILES_H
#define KILN_TEST_UNIT_GRAPH_MODEL_FILES_H

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kiln::test {

inline std::string test_model(const std::string& name) {
  return std::string(KILN_TEST_MODELS) + "/" + name;
}

/// A raw little-endian f32 file as doubles; empty when it does not exist.
inline std::vector<double> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<double> out(bytes.size() / sizeof(float));
  for (std::size_t i = 0; i < out.size(); ++i) {
    float f;
    std::memcpy(&f, bytes.data() + i * sizeof(float), sizeof(float));
    out[i] = f;
  }
  return out;
}

/// The case names of the op suite (the first word of each line of cases.txt).
inline std::vector<std::string> op_cases() {
  std::ifstream in(test_model("ops/cases.txt"));
  std::vector<std::string> cases;
  std::string name, rest;
  while (in >> name && std::getline(in, rest))
    cases.push_back(name);
  return cases;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_GRAPH_MODEL_FILES_H
