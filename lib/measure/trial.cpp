#include "trial.h"

#include "kiln/support/stopwatch.h"

#include <algorithm>

namespace kiln::measure {

record::MeasureResult run_trial(codegen::Jit& jit, const codegen::ObjectCode& object,
                                const ir::ComputeDAG& dag, ArgumentBuffers& buffers,
                                const Reference& reference, const RunnerOptions& options,
                                double& best_seconds) {
  Stopwatch clock;
  record::MeasureResult result;
  auto kernel = jit.load(object);
  if (!kernel) {
    result.error = record::MeasureError::CompileError;
    result.message = kernel.error().message();
    return result;
  }
  buffers.poison_outputs();
  // Packing constant inputs ahead is not part of a call: a user packs once
  // and calls many times.
  (*kernel)->prepack(buffers.pointers());
  Stopwatch first;
  (*kernel)->run(buffers.pointers());
  double first_seconds = first.elapsed_ms() / 1e3;
  CheckReport check = reference.compare(dag, buffers);
  if (!check.passed) {
    result.error = record::MeasureError::WrongAnswer;
    result.message = check.first_mismatch;
  } else if (timed_by_checked_run(first_seconds, best_seconds, options)) {
    result.costs = {first_seconds};
    result.number = 1;
  } else {
    TimingOptions timing = options.timing;
    timing.warmup = std::max(0, timing.warmup - 1); // the checked run warmed up
    Timing t = time_function([&] { (*kernel)->run(buffers.pointers()); }, timing, first_seconds);
    result.costs = t.seconds;
    result.number = t.number;
    if (best_seconds <= 0 || t.median() < best_seconds)
      best_seconds = t.median();
  }
  result.run_seconds = clock.elapsed_ms() / 1e3;
  return result;
}

} // namespace kiln::measure
