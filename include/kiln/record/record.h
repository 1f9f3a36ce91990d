// A record: one measured program, one line of the tuning log
// (docs/log-format.md). Records carry everything needed to rebuild the
// kernel (the DAG text, the target, the steps) and to compare across runs and
// machines (workload key, target, kiln version).
#ifndef KILN_RECORD_RECORD_H
#define KILN_RECORD_RECORD_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/program_key.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/support/error.h"
#include "kiln/support/target.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::record {

/// Why a trial has no valid time. Closed: every consumer switches on it.
enum class MeasureError : std::uint8_t {
  None,
  InvalidSchedule, ///< a step cannot apply
  CompileError,    ///< lowering, LLVM or linking failed
  RuntimeCrash,    ///< the kernel crashed (signal) or the worker died
  Timeout,         ///< the kernel ran past the time limit
  WrongAnswer,     ///< the output differs from the reference
};
inline constexpr int kMeasureErrorKinds = 6;

std::string_view error_name(MeasureError e); ///< "none", "invalid_schedule", …
std::optional<MeasureError> parse_error_name(std::string_view name);

/// The task a record belongs to.
struct TaskInfo {
  std::string workload_key;
  std::string op_name;
  std::vector<ir::Param> params;
  std::string dag_text; ///< canonical op text: enough to rebuild the DAG
  std::string source;   ///< where the op came from (a path), informational
  double flops = 0;

  static TaskInfo from_dag(const ir::ComputeDAG& dag, std::string source);
};

/// The DAG a task was measured on, rebuilt from its canonical text. An
/// Error when the text no longer parses (a log of an incompatible kiln).
Expected<ir::ComputeDAG> task_dag(const TaskInfo& task);

/// What was measured: the schedule's steps, and where in a search space the
/// program came from (so that a resumed search can start from it).
struct Config {
  std::vector<schedule::Step> steps;
  std::string template_name;                               ///< empty unless a template's
  std::vector<std::pair<std::string, std::int64_t>> knobs; ///< knob → choice index
  /// The search space's own numbers for this program (a sketch and its
  /// decisions, or a template's knob choices); empty when it did not come
  /// from a search space.
  std::vector<std::int64_t> point;

  /// The identity of the program (schedule/program_key.h); nullopt for a
  /// template record of knobs alone (written before template records kept
  /// their steps), whose program a template space must rebuild.
  std::optional<schedule::ProgramKey> program() const;
};

struct MeasureResult {
  MeasureError error = MeasureError::None;
  std::string message;       ///< short, for errors
  std::vector<double> costs; ///< seconds per call, one per repeat
  int number = 0;            ///< calls per repeat
  double build_seconds = 0;  ///< lowering + compile
  double run_seconds = 0;    ///< wall time in the runner, checks included
  /// Where a distributed run measured it (docs/tuning.md, "On a cluster"):
  /// the rank's host name and rank; empty and -1 in a run of one process.
  std::string host;
  int rank = -1;

  bool ok() const { return error == MeasureError::None && !costs.empty(); }
  double median() const;
  double min() const;
};

struct Record {
  std::string run; ///< label of the run that measured it, e.g. "online/evolutionary/seed=1"
  TaskInfo task;
  Target target;
  Config config;
  MeasureResult result;
  std::int64_t trial = 0; ///< index of the trial in its run
  double timestamp = 0;   ///< seconds since the epoch
  std::string kiln_version;
  /// The cost model's score for this config before it was measured (NaN
  /// when no trained model scored it).
  double predicted = std::numeric_limits<double>::quiet_NaN();

  double gflops() const; ///< 0 unless ok
};

/// What one round of a tuning run did: a line of its own in the log
/// (`"type": "round"`), for reports of how the tuning went.
struct RoundRecord {
  std::string run;
  std::string workload_key;
  int round = 0;
  std::int64_t sampled = 0;   ///< configs proposed by the strategy
  std::int64_t predicted = 0; ///< programs scored by the model
  std::int64_t measured = 0;
  std::int64_t errors = 0;
  /// Pairwise accuracy of the model on this round's measurements, before it
  /// learnt from them (-1: no trained model scored them).
  double model_accuracy = -1;
  double best_gflops = 0; ///< best so far, after the round
  double sample_seconds = 0, measure_seconds = 0, update_seconds = 0;
  double elapsed_seconds = 0; ///< since the run started
  std::int64_t trials = 0;    ///< trials so far
};

/// The task table of a network tuning run (`"type": "network"`), written
/// when `kiln tune MODEL` starts: it lets a report weigh each task's best
/// into the network's estimated latency.
struct NetworkRecord {
  struct Task {
    std::string key;   ///< workload key of the task's records
    std::string name;  ///< the fused ops, e.g. "conv2d_bias_relu"
    double weight = 1; ///< times the network runs it
    double flops = 0;
  };
  std::string run;   ///< the run label its tasks' records carry
  std::string model; ///< the model file tuned
  std::string scheduler;
  std::vector<Task> tasks;
};

} // namespace kiln::record

#endif // KILN_RECORD_RECORD_H
