// One trial of a compiled candidate, the same in this process (the local
// runner) and in the worker process (the isolated runner, worker.cpp).
#ifndef KILN_MEASURE_TRIAL_H
#define KILN_MEASURE_TRIAL_H

#include "kiln/codegen/jit.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/reference.h"
#include "kiln/measure/runner.h"
#include "kiln/record/record.h"

namespace kiln::measure {

/// Loads `object`, runs it once (checked; it also warms the caches),
/// compares with the reference, and times it. `best_seconds` is the best
/// median so far, updated here.
record::MeasureResult run_trial(codegen::Jit& jit, const codegen::ObjectCode& object,
                                const ir::ComputeDAG& dag, ArgumentBuffers& buffers,
                                const Reference& reference, const RunnerOptions& options,
                                double& best_seconds);

} // namespace kiln::measure

#endif
