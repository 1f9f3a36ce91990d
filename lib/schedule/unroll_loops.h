// Private to schedule: the lowering pass that expands unrolled loops.
#ifndef KILN_LIB_SCHEDULE_UNROLL_LOOPS_H
#define KILN_LIB_SCHEDULE_UNROLL_LOOPS_H

#include "kiln/schedule/loop_nest.h"

namespace kiln::schedule {

/// Replaces every Unrolled loop by copies of its body, one per iteration
/// with the loop variable a constant. Very long loops stay loops.
Stmt unroll_loops(const Stmt& stmt);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_UNROLL_LOOPS_H
