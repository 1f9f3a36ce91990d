// Loading a test model and running it compiled on make-model's inputs,
// for the network tests.
#ifndef KILN_TEST_UNIT_NETWORK_NETWORK_CHECK_H
#define KILN_TEST_UNIT_NETWORK_NETWORK_CHECK_H

#include "../graph/model_files.h"

#include "kiln/codegen/target.h"
#include "kiln/network/compiled_network.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

namespace kiln::test {

inline graph::Network load(const std::string& model) {
  auto net = graph::load_network(test::test_model(model + ".onnx"));
  REQUIRE(net.ok());
  return std::move(*net);
}

/// Runs the network on make-model's inputs; the worst error against its
/// numpy outputs, relative to 1 + |expected|.
inline double worst_error(const graph::Network& net,
                          const std::vector<network::TaskSchedule>& schedules,
                          const std::string& model) {
  auto compiled = network::CompiledNetwork::compile(net, schedules, codegen::host_target());
  INFO((compiled.ok() ? "" : compiled.error().message()));
  REQUIRE(compiled.ok());
  const graph::Graph& g = net.graph;
  std::vector<std::vector<float>> in, out;
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  // 64-byte aligned copies (the kernel ABI's requirement).
  std::vector<std::unique_ptr<float[], void (*)(float*)>> owned;
  auto aligned = [&](std::int64_t n) {
    auto* p = static_cast<float*>(
        std::aligned_alloc(64, static_cast<std::size_t>((n * 4 + 63) / 64 * 64)));
    owned.emplace_back(p, [](float* q) { std::free(q); });
    return p;
  };
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    std::vector<double> v =
        test::read_f32(test::test_model("io/" + model + ".in" + std::to_string(i) + ".f32"));
    float* p = aligned(static_cast<std::int64_t>(v.size()));
    std::copy(v.begin(), v.end(), p);
    in_ptrs.push_back(p);
  }
  for (int o : g.outputs)
    out_ptrs.push_back(aligned(g.tensor(o).num_elements()));
  (*compiled)->run(in_ptrs.data(), out_ptrs.data());
  (*compiled)->run(in_ptrs.data(), out_ptrs.data()); // a second run computes the same
  double worst = 0;
  for (std::size_t o = 0; o < g.outputs.size(); ++o) {
    std::vector<double> want =
        test::read_f32(test::test_model("io/" + model + ".out" + std::to_string(o) + ".f32"));
    REQUIRE(static_cast<std::int64_t>(want.size()) == g.tensor(g.outputs[o]).num_elements());
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(out_ptrs[o][i] - want[i]) / (1.0 + std::fabs(want[i])));
  }
  return worst;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_NETWORK_NETWORK_CHECK_H
