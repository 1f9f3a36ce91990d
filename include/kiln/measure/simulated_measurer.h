// A measurer that builds and runs nothing: each program's time is a fixed
// function of its program key, and each trial takes a fixed wall time. For
// timing kiln's own overhead (a tuning job spread over a cluster, where
// only the cost of the search and of the exchange should show:
// docs/benchmarks.md) and for tests that need the same records from every
// run. `kiln tune --simulate SECONDS`.
#ifndef KILN_MEASURE_SIMULATED_MEASURER_H
#define KILN_MEASURE_SIMULATED_MEASURER_H

#include "kiln/measure/measurer.h"

namespace kiln::measure {

class SimulatedMeasurer : public Measurer {
public:
  /// `trial_seconds`: the wall time each trial takes (slept; 0: none).
  SimulatedMeasurer(const ir::ComputeDAG& dag, double trial_seconds);

  using Measurer::measure;
  /// The naive schedule runs at 1 GFLOPS; any other program at up to 100
  /// GFLOPS, slower the further its widest vector loop is from 8 lanes and
  /// without a parallel loop, with a little noise from its program key: a
  /// landscape a cost model learns, the same on every run and machine. No
  /// errors.
  std::vector<record::MeasureResult>
  measure(std::span<const schedule::State* const> states) override;
  const MeasureStats& stats() const override { return stats_; }

  /// The time `measure` gives the program of `state`.
  double seconds_of(const schedule::State& state) const;

private:
  double flops_;
  double trial_seconds_;
  MeasureStats stats_;
};

/// A MeasurerFactory of SimulatedMeasurers whose trials take `trial_seconds`.
MeasurerFactory simulated_measurers(double trial_seconds);

} // namespace kiln::measure

#endif // KILN_MEASURE_SIMULATED_MEASURER_H
