// Which task of a network to tune next (Ansor's task scheduler). The
// objective is the network's estimated latency, Σ weight × best latency.
// Every task first gets a warm-up round; then the gradient scheduler picks
// the task whose next round is expected to lower the objective most:
// the chain-rule factor (its weight) times a blend of the backward
// gradient (how much its best improved over its last rounds) and the
// forward one (the better of "a round gains what an average round gained"
// and "as fast per FLOP as the best similar task"), with an ε-greedy
// random pick. Round-robin takes the tasks in turn, for comparison.
#ifndef KILN_NETWORK_TASK_SCHEDULER_H
#define KILN_NETWORK_TASK_SCHEDULER_H

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::network {

enum class SchedulerKind : std::uint8_t { Gradient, RoundRobin };
std::string_view scheduler_name(SchedulerKind kind);
std::optional<SchedulerKind> parse_scheduler(std::string_view name);

struct TaskSchedulerOptions {
  SchedulerKind kind = SchedulerKind::Gradient;
  double alpha = 0.2;      ///< weight of the backward gradient against the forward one
  int backward_window = 3; ///< rounds the backward gradient looks back
  double beta = 2.0;       ///< how far a task may close on its similar tasks' speed a round
  double epsilon = 0.05;   ///< probability of a random pick
  std::uint64_t seed = 1;
};

/// What the scheduler knows of one task.
struct TaskProgress {
  double weight = 1; ///< times the network runs it
  double flops = 0;  ///< of one run
  std::string tag;   ///< tasks with one tag are similar (the same ops, FLOPs of one size)
  int rounds = 0;    ///< rounds it has been given
  /// Its best latency in seconds after each of its rounds; a round without
  /// a valid program adds `no_latency`.
  std::vector<double> best;
  bool done = false; ///< early-stopped or its space is exhausted
  double current() const;
};

/// The latency a task without any valid program counts with.
constexpr double no_latency = 1e10;

/// Σ weight × best latency over the tasks, in seconds.
double estimated_latency(const std::vector<TaskProgress>& tasks);

class TaskScheduler {
public:
  explicit TaskScheduler(TaskSchedulerOptions options);
  /// The task to give the next round; -1 when every task is done.
  int next(const std::vector<TaskProgress>& tasks);

private:
  double gradient(const std::vector<TaskProgress>& tasks, std::size_t i) const;
  TaskSchedulerOptions options_;
  std::mt19937_64 rng_;
  std::size_t next_in_turn_ = 0;
};

} // namespace kiln::network

#endif // KILN_NETWORK_TASK_SCHEDULER_H
