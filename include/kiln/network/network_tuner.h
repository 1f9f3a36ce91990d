// Tuning all the tasks of a network in one run (`kiln tune MODEL`): one
// online tuner per task, one cost model learning from every task's records,
// one log, the rounds shared among the tasks by a task scheduler
// (task_scheduler.h) until the total trial budget or the time budget is
// spent.
#ifndef KILN_NETWORK_NETWORK_TUNER_H
#define KILN_NETWORK_NETWORK_TUNER_H

#include "kiln/graph/network.h"
#include "kiln/network/task_scheduler.h"
#include "kiln/search/session.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::network {

struct NetworkTuneOptions {
  /// The per-task options (strategy, batch, seed, early stop, measuring),
  /// the log and resuming; tune.trials and tune.time_budget_seconds are
  /// the whole network's budgets.
  search::SessionOptions session;
  TaskSchedulerOptions scheduler;
};

/// One round of the network run: which task it tuned and where the
/// estimate stands after it.
struct NetworkRound {
  int round = 0;
  int task = 0;
  search::RoundStats task_round;
  std::int64_t trials = 0; ///< over all tasks, this run's
  double estimate_ms = 0;  ///< Σ weight × best latency
  double elapsed_seconds = 0;
};

struct TaskOutcome {
  std::int64_t trials = 0; ///< this run's
  int rounds = 0;
  std::optional<record::Record> best, naive;
  std::string stop_reason;
};

struct NetworkTuneResult {
  std::vector<TaskOutcome> tasks;
  std::vector<NetworkRound> rounds;
  std::int64_t trials = 0;
  double estimate_ms = 0; ///< after the confirmation timings; -1 when a task has no valid program
  double seconds = 0;
  std::string stop_reason;
  std::string log;
  std::vector<std::string> warnings; ///< of the resumed log
  /// Tasks that started from the nearest tuned shape of their op
  /// (session.transfer_logs and the resumed log's other tasks).
  std::vector<std::string> notes;
};

Expected<NetworkTuneResult>
tune_network(const graph::Network& net, const std::string& model_path, const Target& target,
             const NetworkTuneOptions& options,
             const std::function<void(const NetworkRound&)>& progress = nullptr);

} // namespace kiln::network

#endif // KILN_NETWORK_NETWORK_TUNER_H
