// Lowering a schedule (State) to a loop nest. lower() in lower.cpp reads top
// to bottom as the list of passes, each in its own file pair under
// lib/schedule exposing one free function:
//
//   1. build_nest (nest_builder.cpp): the loops of every stage as the steps
//      say, attached stages inside their consumer's loop over the region
//      it reads (bound_inference.cpp), inlined stages substituted, split
//      tails guarded, statements simplified as they are made;
//   2. mark_auto_unroll (auto_unroll.cpp): the auto_unroll_max_step pragma
//      turns small serial loops into unrolled ones;
//   3. vector_dims_innermost (vector_layout.cpp): the kernel's own buffers
//      store the dimension a vector loop walks innermost;
//   4. unroll_loops (unroll_loops.cpp): unrolled loops become copies of
//      their body (only with LowerOptions::expand_unrolled);
//   5. simplify (simplify.cpp): index arithmetic in canonical form, so the
//      copies' constants fold (only with expand_unrolled).
//
// The nest after each pass can be seen with LowerOptions::trace, or on
// stderr with the environment variable KILN_DEBUG=2.
#ifndef KILN_SCHEDULE_LOWER_H
#define KILN_SCHEDULE_LOWER_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/schedule/state.h"

#include <functional>
#include <string_view>

namespace kiln::schedule {

/// How lower() runs its passes.
struct LowerOptions {
  /// Expand Unrolled loops into copies of their body. Code generation needs
  /// it; the cost model's features read the annotation instead, and skip
  /// the (large) expanded tree. (The first member, so that callers can
  /// write `{.expand_unrolled = false}`.)
  bool expand_unrolled = true;
  /// Called after each pass with its name and the nest it left, in the
  /// order of the list above; empty by default (no cost). Initialised here
  /// so that `{.expand_unrolled = false}` does not warn about it.
  std::function<void(std::string_view pass, const Stmt& nest)> trace = nullptr;
};

/// The loop nest of a schedule: stages in DAG order at the root, attached
/// stages inside their consumer's loop over the region it reads (bound
/// inference), inlined stages substituted, split tails guarded, unrolled
/// loops expanded. Root stages computed from constant inputs alone (a packed
/// weight) go to the prepack function instead, and their buffers become
/// Packed arguments after the outputs.
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
