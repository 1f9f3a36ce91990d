// Lowering a schedule (State) to a loop nest. Reads top to bottom as the
// list of passes in lower.cpp; each pass has its own file.
#ifndef KILN_SCHEDULE_LOWER_H
#define KILN_SCHEDULE_LOWER_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/schedule/state.h"

namespace kiln::schedule {

/// The loop nest of a schedule: stages in DAG order at the root, attached
/// stages inside their consumer's loop over the region it reads (bound
/// inference), inlined stages substituted, split tails guarded, unrolled
/// loops expanded.
struct LowerOptions {
  /// Expand Unrolled loops into copies of their body. Code generation needs
  /// it; the cost model's features read the annotation instead, and skip
  /// the (large) expanded tree.
  bool expand_unrolled = true;
};

LoweredFunc lower(const State& state, const LowerOptions& options = {});

/// The naive schedule: lower(State(dag)). Every compute stage in DAG order,
/// one serial loop per axis, reduction axes innermost; intermediate stages
/// are heap buffers that live for the whole kernel.
LoweredFunc lower_naive(const ir::ComputeDAG& dag);

/// The symbol name of the kernel for a DAG: `kiln_` plus the op name with
/// anything but [A-Za-z0-9_] replaced by '_'.
std::string kernel_name(const ir::ComputeDAG& dag);

/// The buffer that holds a stage's values.
Buffer stage_buffer(const ir::Stage& stage, BufferScope scope);

/// The value a reduction starts from: 0 for sum, -inf / +inf (or the
/// integer extremes) for max / min.
ir::Expr reduce_identity(ir::ReduceOp op, ir::ScalarType type);

/// `acc op value`, the combine of one reduction step.
ir::Expr reduce_combine(ir::ReduceOp op, ir::Expr acc, ir::Expr value);

} // namespace kiln::schedule

#endif // KILN_SCHEDULE_LOWER_H
