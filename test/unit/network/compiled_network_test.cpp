// The tiny networks compiled and run: with naive kernels and with random
// schedules from each task's sketch space (packed weights, fused groups,
// reshapes read through), their outputs are numpy's; the activations'
// buffers never overlap while both are live.
#include "../graph/model_files.h"

#include "kiln/codegen/target.h"
#include "kiln/network/compiled_network.h"
#include "kiln/network/network_run.h"
#include "kiln/search/search_space.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

using namespace kiln;

namespace {

graph::Network load(const std::string& model) {
  auto net = graph::load_network(test::test_model(model + ".onnx"));
  REQUIRE(net.ok());
  return std::move(*net);
}

/// Runs the network on make-model's inputs; the worst error against its
/// numpy outputs, relative to 1 + |expected|.
double worst_error(const graph::Network& net, const std::vector<network::TaskSchedule>& schedules,
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

} // namespace

TEST_CASE("the tiny networks run with naive kernels compute numpy's outputs", "[network]") {
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    INFO(m);
    graph::Network net = load(m);
    CHECK(worst_error(net, network::naive_schedules(net), m) < 1e-5);
  }
}

TEST_CASE("the tiny networks run with random sketch schedules compute numpy's outputs",
          "[network]") {
  const Target target = codegen::host_target();
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    graph::Network net = load(m);
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      INFO(m << " seed " << seed);
      std::mt19937_64 rng(seed);
      std::vector<network::TaskSchedule> schedules;
      for (const graph::Task& task : net.tasks) {
        auto space = search::make_search_space(task.dag, target, "sketch", "");
        REQUIRE(space.ok());
        network::TaskSchedule s{std::nullopt, "random", -1};
        for (int attempt = 0; attempt < 20 && !s.state; ++attempt) {
          auto state = (*space)->state((*space)->sample(rng));
          if (state.ok())
            s.state = std::move(*state);
        }
        REQUIRE(s.state.has_value());
        schedules.push_back(std::move(s));
      }
      CHECK(worst_error(net, schedules, m) < 1e-4);
    }
  }
}

TEST_CASE("activations share bytes only when their lives do not overlap", "[network]") {
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    INFO(m);
    graph::Network net = load(m);
    network::BufferPlan plan = network::plan_buffers(net);
    const graph::Graph& g = net.graph;
    // Each tensor's life: from the group writing it to the last group reading it.
    std::map<int, std::pair<int, int>> life;
    for (std::size_t k = 0; k < net.groups.size(); ++k) {
      life[net.groups[k].output] = {static_cast<int>(k), static_cast<int>(k)};
      const auto& args = net.kernels[k].arguments;
      for (std::size_t a = 0; a + 1 < args.size(); ++a) {
        auto it = life.find(g.view_base(args[a]));
        if (it != life.end())
          it->second.second = static_cast<int>(k);
      }
    }
    CHECK(plan.arena_bytes <= plan.unshared_bytes);
    for (const auto& [a, at_a] : plan.offsets)
      for (const auto& [b, at_b] : plan.offsets) {
        if (a >= b)
          continue;
        const std::int64_t end_a = at_a + g.tensor(a).num_elements() * 4;
        const std::int64_t end_b = at_b + g.tensor(b).num_elements() * 4;
        const bool bytes_overlap = at_a < end_b && at_b < end_a;
        const bool lives_overlap =
            life[a].first <= life[b].second && life[b].first <= life[a].second;
        CHECK_FALSE((bytes_overlap && lives_overlap));
      }
  }
}
