// Small shapes for every op in ops/, shared by the end-to-end tests: kernels
// this small compile and run in milliseconds and the interpreter checks every
// element. A new op in ops/ must add its own entry to both tables.
#ifndef KILN_TEST_E2E_SMALL_SHAPES_H
#define KILN_TEST_E2E_SMALL_SHAPES_H

#include "kiln/ir/compute_dag.h"
#include "kiln/ir/parser.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kiln::test {

/// Shapes with no common factors, so that most splits leave tails.
inline const std::map<std::string, ir::ParamOverrides>& small_shapes() {
  static const std::map<std::string, ir::ParamOverrides> shapes = {
      {"matmul", {{"M", "13"}, {"N", "17"}, {"K", "9"}}},
      {"batch_matmul", {{"BATCH", "2"}, {"M", "5"}, {"N", "7"}, {"K", "3"}}},
      {"dense_bias_relu", {{"BATCH", "3"}, {"IN", "11"}, {"OUT", "6"}}},
      {"conv2d_nchw",
       {{"N", "1"}, {"C", "3"}, {"H", "7"}, {"W", "6"}, {"K", "4"}, {"stride", "2"}}},
      {"conv2d_nchwc", {{"N", "1"}, {"CB", "2"}, {"H", "5"}, {"W", "6"}, {"KB", "3"}, {"VB", "4"}}},
      {"conv2d_nhwc",
       {{"N", "1"}, {"C", "3"}, {"H", "6"}, {"W", "7"}, {"K", "5"}, {"stride", "2"}}},
      {"depthwise_conv2d", {{"N", "1"}, {"C", "3"}, {"H", "6"}, {"W", "7"}}},
      {"max_pool2d", {{"N", "1"}, {"C", "2"}, {"H", "9"}, {"W", "8"}}},
      {"softmax", {{"N", "3"}, {"M", "10"}}},
      {"layer_norm", {{"M", "7"}, {"N", "13"}}},
      {"transpose", {{"M", "5"}, {"N", "9"}}},
      {"row_sum", {{"M", "6"}, {"N", "10"}}},
  };
  return shapes;
}

/// Shapes at the edges: extents of 1, primes up to ~20, windows and strides
/// that do not tile the input.
inline const std::map<std::string, ir::ParamOverrides>& edge_shapes() {
  static const std::map<std::string, ir::ParamOverrides> shapes = {
      {"matmul", {{"M", "1"}, {"N", "19"}, {"K", "7"}}},
      {"batch_matmul", {{"BATCH", "1"}, {"M", "7"}, {"N", "1"}, {"K", "5"}}},
      {"dense_bias_relu", {{"BATCH", "1"}, {"IN", "17"}, {"OUT", "13"}}},
      {"conv2d_nchw",
       {{"N", "2"}, {"C", "2"}, {"H", "5"}, {"W", "9"}, {"K", "3"}, {"S", "1"}, {"stride", "1"}}},
      {"conv2d_nchwc",
       {{"N", "2"},
        {"CB", "1"},
        {"H", "4"},
        {"W", "7"},
        {"KB", "1"},
        {"S", "1"},
        {"pad", "0"},
        {"VB", "3"}}},
      {"conv2d_nhwc",
       {{"N", "2"}, {"C", "1"}, {"H", "5"}, {"W", "3"}, {"K", "7"}, {"R", "1"}, {"pad", "0"}}},
      {"depthwise_conv2d",
       {{"N", "1"}, {"C", "5"}, {"H", "4"}, {"W", "3"}, {"stride", "2"}, {"pad", "0"}}},
      {"max_pool2d",
       {{"N", "2"},
        {"C", "1"},
        {"H", "5"},
        {"W", "7"},
        {"KH", "2"},
        {"stride", "1"},
        {"pad", "0"}}},
      {"softmax", {{"M", "1"}, {"N", "19"}}},
      {"layer_norm", {{"M", "1"}, {"N", "17"}}},
      {"transpose", {{"M", "20"}, {"N", "3"}}},
      {"row_sum", {{"M", "17"}, {"N", "1"}}},
  };
  return shapes;
}

/// The op files in ops/, sorted by name.
inline std::vector<std::filesystem::path> op_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(KILN_SOURCE_DIR) / "ops"))
    if (entry.path().extension() == ".kop")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::filesystem::path op_file(const std::string& op) {
  return std::filesystem::path(KILN_SOURCE_DIR) / "ops" / (op + ".kop");
}

/// `--set NAME=VALUE ...` for a shape, as `kiln run` takes it.
inline std::string set_flags(const ir::ParamOverrides& shape) {
  std::string flags;
  for (const auto& [name, value] : shape)
    flags += (flags.empty() ? "--set " : " --set ") + name + "=" + value;
  return flags;
}

} // namespace kiln::test

#endif
