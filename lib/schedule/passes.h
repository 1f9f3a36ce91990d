// Private to schedule: the lowering passes after the nest is built.
#ifndef KILN_LIB_SCHEDULE_PASSES_H
#define KILN_LIB_SCHEDULE_PASSES_H

#include "kiln/schedule/loop_nest.h"

#include <cstdint>

namespace kiln::schedule {

/// Marks serial loops Unrolled when the statements they execute in all,
/// counting inner loops, are at most `max_step` (auto_unroll_max_step), and
/// whose expanded code stays under a fixed number of scalar lanes.
Stmt mark_auto_unroll(const Stmt& stmt, std::int64_t max_step);

/// Replaces every Unrolled loop by copies of its body, one per iteration.
Stmt unroll_loops(const Stmt& stmt);

/// Stores the dimension a vector loop walks innermost in every buffer the
/// kernel allocates (vector_layout.cpp), so its accesses there are
/// consecutive lanes rather than gathers and scatters.
Stmt vector_dims_innermost(const Stmt& stmt);

/// Rewrites affine integer expressions (indices, conditions' operands) into
/// a canonical sum, so that unrolled constants fold and dumps stay readable.
Stmt simplify(const Stmt& stmt);

/// simplify() of one expression. The nest builder applies it to each
/// statement it makes, so a nest that is not unrolled needs no simplify
/// pass (which would rebuild every statement once more).
ir::Expr simplify_expr(const ir::Expr& expr);

} // namespace kiln::schedule

#endif
