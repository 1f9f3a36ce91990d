#include "kiln/network/task_scheduler.h"

#include "kiln/support/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::network {

std::string_view scheduler_name(SchedulerKind kind) {
  return kind == SchedulerKind::Gradient ? "gradient" : "round-robin";
}

std::optional<SchedulerKind> parse_scheduler(std::string_view name) {
  for (SchedulerKind k : {SchedulerKind::Gradient, SchedulerKind::RoundRobin})
    if (scheduler_name(k) == name)
      return k;
  return std::nullopt;
}

double TaskProgress::current() const {
  return best.empty() ? no_latency : best.back();
}

double estimated_latency(const std::vector<TaskProgress>& tasks) {
  double sum = 0;
  for (const TaskProgress& t : tasks)
    sum += t.weight * t.current();
  return sum;
}

TaskScheduler::TaskScheduler(TaskSchedulerOptions options)
    : options_(options), rng_(options.seed) {}

double TaskScheduler::gradient(const std::vector<TaskProgress>& tasks, std::size_t i) const {
  const TaskProgress& t = tasks[i];
  const double best = t.current();
  // d(objective)/d(best_i): the weight, for a weighted sum.
  const double chain = t.weight;
  // (g(t) - g(t - window)) / window over its own rounds.
  double backward = 0;
  const auto window = static_cast<std::size_t>(options_.backward_window);
  if (t.best.size() > window)
    backward = (t.best.back() - t.best[t.best.size() - 1 - window]) / static_cast<double>(window);
  // What the next round may reach: an average round's gain so far, or the
  // speed per FLOP of the best similar task, scaled by beta.
  double next_by_rounds = best - best / std::max(t.rounds, 1);
  double next_by_similar = options_.beta * no_latency;
  int similar = 0;
  double best_flops_per_second = 0;
  for (const TaskProgress& o : tasks)
    if (o.tag == t.tag) {
      ++similar;
      if (o.current() < no_latency && o.flops > 0)
        best_flops_per_second = std::max(best_flops_per_second, o.flops / o.current());
    }
  if (similar > 1 && best_flops_per_second > 0)
    next_by_similar = options_.beta * t.flops / best_flops_per_second;
  const double forward = std::min(next_by_rounds, next_by_similar) - best;
  return chain * (options_.alpha * backward + (1 - options_.alpha) * forward);
}

int TaskScheduler::next(const std::vector<TaskProgress>& tasks) {
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!tasks[i].done)
      open.push_back(i);
  if (open.empty())
    return -1;
  // Warm-up: every task once, in order.
  for (std::size_t i : open)
    if (tasks[i].rounds == 0)
      return static_cast<int>(i);
  if (options_.kind == SchedulerKind::RoundRobin) {
    for (std::size_t step = 0; step < tasks.size(); ++step) {
      std::size_t i = (next_in_turn_ + step) % tasks.size();
      if (!tasks[i].done) {
        next_in_turn_ = i + 1;
        return static_cast<int>(i);
      }
    }
    kiln_unreachable("an open task is found in one turn");
  }
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  if (coin(rng_) < options_.epsilon)
    return static_cast<int>(
        open[std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng_)]);
  double lowest = std::numeric_limits<double>::infinity(), highest = -lowest;
  std::size_t pick = open.front();
  for (std::size_t i : open) {
    const double g = gradient(tasks, i);
    if (g < lowest) {
      lowest = g;
      pick = i;
    }
    highest = std::max(highest, g);
  }
  if (lowest == highest) // nothing to tell them apart
    return static_cast<int>(
        open[std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(rng_)]);
  return static_cast<int>(pick);
}

} // namespace kiln::network
