// The task scheduler on simulated tasks: each task's best latency after k
// rounds follows a fixed curve, so the allocation is deterministic and the
// gradient scheduler can be compared with round-robin exactly.
#include "kiln/network/task_scheduler.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace kiln::network;

namespace {

/// A task whose best latency after k rounds is floor * (1 + gap * e^(-k/tau)).
struct Simulated {
  double weight, flops, floor, gap, tau;
  const char* tag;
  double best_after(int k) const { return floor * (1 + gap * std::exp(-k / tau)); }
};

// A network's shape: a few heavy tasks that converge slowly, many light ones.
const std::vector<Simulated> network = {
    {1, 2e9, 2e-3, 4.0, 6.0, "conv"},        {4, 1e9, 1e-3, 6.0, 10.0, "conv"},
    {2, 5e8, 5e-4, 3.0, 4.0, "conv"},        {1, 1e7, 2e-5, 1.0, 2.0, "pool"},
    {3, 8e8, 8e-4, 5.0, 8.0, "dense"},       {1, 1e6, 5e-6, 0.5, 1.0, "softmax"},
    {1, 1e6, 4e-6, 0.5, 1.0, "elementwise"}, {2, 2e6, 6e-6, 0.5, 1.0, "norm"},
};

/// Runs `rounds` rounds; returns the picks and the estimate after each.
std::pair<std::vector<int>, std::vector<double>> simulate(SchedulerKind kind, int rounds,
                                                          std::uint64_t seed = 1) {
  TaskSchedulerOptions o;
  o.kind = kind;
  o.seed = seed;
  TaskScheduler scheduler(o);
  std::vector<TaskProgress> tasks;
  for (const Simulated& s : network) {
    TaskProgress p;
    p.weight = s.weight;
    p.flops = s.flops;
    p.tag = s.tag;
    tasks.push_back(p);
  }
  std::vector<int> picks;
  std::vector<double> estimates;
  for (int r = 0; r < rounds; ++r) {
    int t = scheduler.next(tasks);
    REQUIRE(t >= 0);
    picks.push_back(t);
    TaskProgress& p = tasks[static_cast<std::size_t>(t)];
    ++p.rounds;
    p.best.push_back(network[static_cast<std::size_t>(t)].best_after(p.rounds));
    estimates.push_back(estimated_latency(tasks));
  }
  return {picks, estimates};
}

} // namespace

TEST_CASE("every task gets a warm-up round first, in order", "[network][scheduler]") {
  for (SchedulerKind kind : {SchedulerKind::Gradient, SchedulerKind::RoundRobin}) {
    auto [picks, estimates] = simulate(kind, static_cast<int>(network.size()));
    for (std::size_t i = 0; i < network.size(); ++i)
      CHECK(picks[i] == static_cast<int>(i));
    CHECK(estimates.back() < no_latency);
  }
}

TEST_CASE("the allocation is deterministic for a seed", "[network][scheduler]") {
  CHECK(simulate(SchedulerKind::Gradient, 120, 7).first ==
        simulate(SchedulerKind::Gradient, 120, 7).first);
}

TEST_CASE("the gradient scheduler gives the rounds to the tasks that cut the network's time, "
          "reaching round-robin's estimate in at most 60% of its rounds",
          "[network][scheduler]") {
  const int rounds = 160;
  auto [rr_picks, rr] = simulate(SchedulerKind::RoundRobin, rounds);
  auto [gr_picks, gr] = simulate(SchedulerKind::Gradient, rounds);
  CHECK(gr.back() < rr.back());
  int reached = rounds;
  for (int r = 0; r < rounds; ++r)
    if (gr[static_cast<std::size_t>(r)] <= rr.back()) {
      reached = r + 1;
      break;
    }
  INFO("gradient reaches round-robin's final estimate after " << reached << " of " << rounds
                                                              << " rounds");
  CHECK(reached <= rounds * 6 / 10);
  // The heaviest slow task (weight 4) gets more rounds than a light one.
  auto count = [](const std::vector<int>& picks, int t) {
    return std::count(picks.begin(), picks.end(), t);
  };
  CHECK(count(gr_picks, 1) > count(gr_picks, 5));
}

TEST_CASE("a task that is done is not picked, and none is when all are", "[network][scheduler]") {
  TaskScheduler scheduler({});
  std::vector<TaskProgress> tasks(3);
  for (TaskProgress& t : tasks) {
    t.rounds = 1;
    t.best = {1e-3};
    t.tag = "x";
    t.flops = 1e6;
  }
  tasks[0].done = tasks[2].done = true;
  for (int i = 0; i < 20; ++i)
    CHECK(scheduler.next(tasks) == 1);
  tasks[1].done = true;
  CHECK(scheduler.next(tasks) == -1);
}
