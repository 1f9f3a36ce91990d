#include "kiln/measure/simulated_measurer.h"

#include "kiln/support/stopwatch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

namespace kiln::measure {

SimulatedMeasurer::SimulatedMeasurer(const ir::ComputeDAG& dag, double trial_seconds)
    : flops_(std::max(dag.flop_count(), 1.0)), trial_seconds_(trial_seconds) {}

double SimulatedMeasurer::seconds_of(const schedule::State& state) const {
  if (state.steps().empty())
    return flops_ / 1e9;
  // A landscape a cost model can learn, as a real machine's is: fastest
  // with vector loops of 8 lanes and a parallel loop, plus a little noise
  // of the program's own.
  std::int64_t lanes = 1;
  bool parallel = false;
  for (const schedule::StageState& stage : state.stages())
    for (const schedule::Iterator& it : stage.iters) {
      if (it.annotation == schedule::Annotation::Vectorize)
        lanes = std::max(lanes, it.extent);
      parallel |= it.annotation == schedule::Annotation::Parallel;
    }
  const schedule::ProgramKey key = state.key();
  const double noise = static_cast<double>(key.lo >> 11) / static_cast<double>(1ULL << 53);
  const double slowdown = 1 + 0.5 * std::abs(std::log2(static_cast<double>(lanes)) - 3) +
                          (parallel ? 0.0 : 1.0) + 0.3 * noise;
  return flops_ / (100e9 / slowdown);
}

std::vector<record::MeasureResult>
SimulatedMeasurer::measure(std::span<const schedule::State* const> states) {
  Stopwatch clock;
  std::vector<record::MeasureResult> out;
  for (const schedule::State* s : states) {
    if (trial_seconds_ > 0)
      std::this_thread::sleep_for(std::chrono::duration<double>(trial_seconds_));
    record::MeasureResult r;
    r.costs = {seconds_of(*s)};
    r.number = 1;
    r.run_seconds = trial_seconds_;
    ++stats_.trials;
    ++stats_.by_error[0];
    stats_.run_seconds += trial_seconds_;
    out.push_back(std::move(r));
  }
  stats_.wall_seconds += clock.elapsed_ms() / 1e3;
  return out;
}

MeasurerFactory simulated_measurers(double trial_seconds) {
  return [trial_seconds](const ir::ComputeDAG& dag, const Target&,
                         const MeasureOptions&) -> Expected<std::unique_ptr<Measurer>> {
    return std::unique_ptr<Measurer>(std::make_unique<SimulatedMeasurer>(dag, trial_seconds));
  };
}

} // namespace kiln::measure
