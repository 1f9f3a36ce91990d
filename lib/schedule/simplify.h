// Private to schedule: the lowering pass that puts index arithmetic in a
// canonical form.
#ifndef KILN_LIB_SCHEDULE_SIMPLIFY_H
#define KILN_LIB_SCHEDULE_SIMPLIFY_H

#include "kiln/schedule/loop_nest.h"

namespace kiln::schedule {

/// Rewrites affine integer expressions (indices, conditions' operands) into
/// a canonical sum, so that unrolled constants fold and dumps stay readable.
Stmt simplify(const Stmt& stmt);

/// simplify() of one expression. The nest builder applies it to each
/// statement it makes, so a nest that is not unrolled needs no simplify
/// pass (which would rebuild every statement once more).
ir::Expr simplify_expr(const ir::Expr& expr);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_SIMPLIFY_H
