// Private to schedule: the first step of lowering, the loop nest exactly as
// a schedule's steps describe it.
#ifndef KILN_LIB_SCHEDULE_NEST_BUILDER_H
#define KILN_LIB_SCHEDULE_NEST_BUILDER_H

#include "auto_unroll.h"

#include "kiln/schedule/loop_nest.h"
#include "kiln/schedule/state.h"

namespace kiln::schedule {

/// A built nest, and what its later passes need from the schedule.
struct BuiltNest {
  Stmt body;
  /// The root stages computed from constant inputs alone (in DAG order),
  /// or undefined; they write the `packed` buffers.
  Stmt prepack;
  std::vector<Buffer> packed;
  /// For mark_auto_unroll: the pragma in force at each loop of `body`.
  AutoUnrollSteps auto_unroll_steps;
};

/// The loop nest of a state: stages in DAG order at the root (those that
/// read constant inputs alone, and are no output, in the prepack nest), attached
/// stages inside their consumer's loop over the region it reads (bound
/// inference), inlined stages substituted, split tails guarded. Loops of
/// extent 1 are left out (their variable is 0), and each statement is made
/// in simplified form (simplify_expr).
BuiltNest build_nest(const State& state);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_NEST_BUILDER_H
