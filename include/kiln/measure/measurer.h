// Measuring the programs of one task: the builder and the runner behind the
// one interface the tuner sees. Tests put a simulated measurer behind the
// same interface.
#ifndef KILN_MEASURE_MEASURER_H
#define KILN_MEASURE_MEASURER_H

#include "kiln/ir/compute_dag.h"
#include "kiln/measure/builder.h"
#include "kiln/measure/reference.h"
#include "kiln/measure/runner.h"
#include "kiln/record/record.h"
#include "kiln/schedule/state.h"
#include "kiln/support/target.h"

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace kiln::measure {

/// Trials and time so far, by outcome.
struct MeasureStats {
  std::array<std::int64_t, record::kMeasureErrorKinds> by_error{}; ///< indexed by MeasureError
  std::int64_t trials = 0;
  double build_seconds = 0; ///< summed over builder threads
  double run_seconds = 0;
  double wall_seconds = 0;

  std::int64_t errors() const { return trials - by_error[0]; }
};

class Measurer {
public:
  virtual ~Measurer() = default;
  /// Measures a batch of schedules of the task; one result per state, in
  /// order. Never throws.
  virtual std::vector<record::MeasureResult>
  measure(std::span<const schedule::State* const> states) = 0;
  std::vector<record::MeasureResult> measure(const std::vector<schedule::State>& states);
  virtual const MeasureStats& stats() const = 0;

  /// Starts measuring a batch, for a caller that does other work meanwhile
  /// (a pipelined tuner): a measurer that measures elsewhere returns at
  /// once, and the states must live until collect(); this one measures
  /// now. One batch at a time.
  virtual void submit(std::span<const schedule::State* const> states);
  /// The results of the batch submit() started, in order.
  virtual std::vector<record::MeasureResult> collect();

private:
  std::vector<record::MeasureResult> submitted_;
};

struct MeasureOptions {
  int build_threads = 0; ///< < 1: one per core
  /// Run trials, and the reference, in kiln-worker, a process of their own
  /// (worker.h); runner.worker names its executable.
  bool isolate = true;
  /// Seconds the isolated reference computation (the naive kernel and the
  /// interpreter, once per run) may take.
  double reference_timeout_seconds = 600;
  RunnerOptions runner;
  CheckOptions check;
  std::uint64_t seed = 1; ///< input data
};

/// A "bad-option" error naming the first option out of its range (by its
/// `kiln` flag), or nothing. ProgramMeasurer::create checks its options so.
std::optional<Error> check_options(const MeasureOptions& options);

/// Makes the measurer of one task: ProgramMeasurer::create unless a run
/// measures otherwise (simulated, spread over a cluster).
using MeasurerFactory = std::function<Expected<std::unique_ptr<Measurer>>(
    const ir::ComputeDAG& dag, const Target& target, const MeasureOptions& options)>;

/// ProgramMeasurer::create, as a MeasurerFactory.
Expected<std::unique_ptr<Measurer>> make_program_measurer(const ir::ComputeDAG& dag,
                                                          const Target& target,
                                                          const MeasureOptions& options);

/// Builds (in parallel) and runs (one at a time) real kernels.
class ProgramMeasurer : public Measurer {
public:
  /// Compiles and checks the reference (the naive schedule) first.
  static Expected<std::unique_ptr<ProgramMeasurer>>
  create(const ir::ComputeDAG& dag, const Target& target, const MeasureOptions& options);
  ~ProgramMeasurer() override;

  using Measurer::measure;
  std::vector<record::MeasureResult>
  measure(std::span<const schedule::State* const> states) override;
  const MeasureStats& stats() const override { return stats_; }
  const Reference& reference() const { return *reference_; }

private:
  ProgramMeasurer() = default;
  ir::ComputeDAG dag_;
  std::unique_ptr<Reference> reference_;
  std::unique_ptr<Runner> runner_;
  std::unique_ptr<Builder> builder_;
  MeasureStats stats_;
};

} // namespace kiln::measure

#endif
