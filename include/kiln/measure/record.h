// A record: one measured config, one line of the tuning log
// (docs/log-format.md). Records carry everything needed to rebuild the
// kernel (the DAG text, the target, the steps) and to compare across runs and
// machines (workload key, target, kiln version).
#ifndef KILN_MEASURE_RECORD_H
#define KILN_MEASURE_RECORD_H

#include "kiln/codegen/target.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::measure {

/// Format version of records; readers refuse other versions line by line.
inline constexpr int kRecordVersion = 1;

/// Why a trial has no valid time. Closed: every consumer switches on it.
enum class MeasureError : std::uint8_t {
  None,
  InvalidSchedule, ///< a step cannot apply
  CompileError,    ///< lowering, LLVM or linking failed
  RuntimeCrash,    ///< the kernel crashed (signal) or the worker died
  Timeout,         ///< the kernel ran past the time limit
  WrongAnswer,     ///< the output differs from the reference
};

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

/// What was measured: a schedule's steps, or a template's knob choices.
struct Config {
  std::vector<schedule::Step> steps;
  std::string template_name;                               ///< empty for step configs
  std::vector<std::pair<std::string, std::int64_t>> knobs; ///< knob → choice index

  /// A stable text that identifies the config (used to skip repeats).
  std::string key() const;
};

struct MeasureResult {
  MeasureError error = MeasureError::None;
  std::string message;       ///< short, for errors
  std::vector<double> costs; ///< seconds per call, one per repeat
  int number = 0;            ///< calls per repeat
  double build_seconds = 0;  ///< lowering + compile
  double run_seconds = 0;    ///< wall time in the runner, checks included

  bool ok() const { return error == MeasureError::None && !costs.empty(); }
  double median() const;
  double min() const;
};

struct Record {
  TaskInfo task;
  codegen::Target target;
  Config config;
  MeasureResult result;
  std::int64_t trial = 0; ///< index of the trial in its run
  double timestamp = 0;   ///< seconds since the epoch
  std::string kiln_version;

  double gflops() const; ///< 0 unless ok
};

/// One JSON object on one line (no newline).
std::string to_json_line(const Record& record);
/// Parses one log line; the Error says what is wrong with it.
Expected<Record> parse_record(std::string_view line);

} // namespace kiln::measure

#endif
