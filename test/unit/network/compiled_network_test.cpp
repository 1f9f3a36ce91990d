// The tiny networks compiled and run: with naive kernels and with random
// schedules from each task's sketch space (packed weights, fused groups,
// reshapes read through), their outputs are numpy's; the activations'
// buffers never overlap while both are live.
#include "network_check.h"

#include "kiln/codegen/target.h"
#include "kiln/network/network_run.h"
#include "kiln/search/search_space.h"

#include <catch2/catch.hpp>

#include <random>
#include <set>

using namespace kiln;
using test::load;
using test::worst_error;

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

TEST_CASE("a profiled run times every group and adds them up by task", "[network]") {
  graph::Network net = load("tiny_mobilenet");
  std::vector<network::TaskSchedule> schedules = network::naive_schedules(net);
  // A record's time on one task, to be set against its time in the network.
  schedules.front().record_ms = 0.5;
  network::NetworkRunOptions options;
  options.warmup = 0;
  options.repeat = 1;
  options.check = false;
  options.profile_repeats = 3;
  auto report = network::run_network(net, schedules, codegen::host_target(), options);
  REQUIRE(report.ok());
  REQUIRE(report->group_ms.size() == net.groups.size());
  double groups = 0;
  for (double ms : report->group_ms) {
    CHECK(ms >= 0);
    groups += ms;
  }
  std::vector<network::TaskProfile> by_task =
      network::profile_by_task(net, schedules, report->group_ms);
  REQUIRE(by_task.size() == net.tasks.size());
  double tasks = 0;
  std::set<int> seen;
  for (std::size_t i = 0; i < by_task.size(); ++i) {
    const network::TaskProfile& p = by_task[i];
    seen.insert(p.task);
    tasks += p.network_ms;
    if (i > 0)
      CHECK(by_task[i - 1].network_ms >= p.network_ms); // the slowest first
    const graph::Task& task = net.tasks[static_cast<std::size_t>(p.task)];
    double own = 0;
    for (int g : task.groups)
      own += report->group_ms[static_cast<std::size_t>(g)];
    CHECK(p.network_ms == Approx(own));
    // The record's time counts once per group the task computes.
    CHECK(p.record_ms == (p.task == 0 ? 0.5 * task.weight() : -1.0));
  }
  CHECK(seen.size() == net.tasks.size());
  CHECK(tasks == Approx(groups));
}

TEST_CASE("a 1x1 conv whose chain ends in a graph output runs on the flat map and writes the "
          "output in the model's shape",
          "[network]") {
  // conv 1x1 (3 -> 6 channels) on a 4x5 map, then relu: the model's output.
  graph::Graph g;
  g.name = "pointwise";
  const int x = g.add_tensor({"x", {1, 3, 4, 5}, nullptr});
  std::vector<float> wv(18), bv(6);
  for (std::size_t i = 0; i < wv.size(); ++i)
    wv[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.25f;
  for (std::size_t i = 0; i < bv.size(); ++i)
    bv[i] = static_cast<float>(i) * 0.5f - 1.0f;
  const int w = g.add_constant("w", {6, 3, 1, 1}, wv);
  const int b = g.add_constant("b", {6}, bv);
  const int y = g.add_tensor({"y", {1, 6, 4, 5}, nullptr});
  const int z = g.add_tensor({"z", {1, 6, 4, 5}, nullptr});
  graph::Node conv{"conv", graph::OpKind::Conv, {x, w, b}, y, {}, {}};
  conv.attrs.kernel_shape = {1, 1};
  conv.attrs.strides = {1, 1};
  conv.attrs.pads = {0, 0, 0, 0};
  conv.attrs.dilations = {1, 1};
  graph::Node relu{"relu", graph::OpKind::Relu, {y}, z, {}, {}};
  g.nodes = {conv, relu};
  g.inputs = {x};
  g.outputs = {z};
  graph::Network net = graph::build_network(std::move(g));

  REQUIRE(net.groups.size() == 1);
  CHECK(net.graph.tensor(net.groups[0].output).shape == std::vector<std::int64_t>{1, 6, 1, 20});
  CHECK(net.graph.tensor(z).shape == std::vector<std::int64_t>{1, 6, 4, 5});

  std::vector<float> in(60);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(static_cast<int>(i * 37 % 11) - 5) * 0.1f;
  std::vector<double> want(120);
  for (std::size_t k = 0; k < 6; ++k)
    for (std::size_t p = 0; p < 20; ++p) {
      double acc = bv[k];
      for (std::size_t c = 0; c < 3; ++c)
        acc += static_cast<double>(wv[k * 3 + c]) * in[c * 20 + p];
      want[k * 20 + p] = std::max(acc, 0.0);
    }

  std::vector<std::vector<double>> interpreted =
      graph::interpret_network(net, {std::vector<double>(in.begin(), in.end())});
  REQUIRE(interpreted.size() == 1);
  REQUIRE(interpreted[0].size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(interpreted[0][i] == Approx(want[i]).margin(1e-6));

  auto compiled =
      network::CompiledNetwork::compile(net, network::naive_schedules(net), codegen::host_target());
  REQUIRE(compiled.ok());
  auto* input = static_cast<float*>(std::aligned_alloc(64, 256));
  auto* output = static_cast<float*>(std::aligned_alloc(64, 512));
  std::copy(in.begin(), in.end(), input);
  const float* inputs[] = {input};
  float* outputs[] = {output};
  (*compiled)->run(inputs, outputs);
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(output[i] == Approx(want[i]).margin(1e-5));
  std::free(input);
  std::free(output);
}
