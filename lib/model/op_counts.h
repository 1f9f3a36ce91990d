// Private to model: counting the operations of expressions into the compute
// group of a feature row.
#ifndef KILN_LIB_MODEL_OP_COUNTS_H
#define KILN_LIB_MODEL_OP_COUNTS_H

#include "feature_row.h"

#include "kiln/ir/expr.h"

namespace kiln::model::detail {

/// Adds the operations of one evaluation of `e` to `counts`. A multiply
/// feeding an add or subtract of the same class is one multiply-add (an FMA
/// on the host).
void count_ops(const ir::Expr& e, ComputeCounts& counts);

/// to += from × k, operation by operation.
void add_scaled(ComputeCounts& to, const ComputeCounts& from, double k);

/// Floating-point operations, a multiply-add counting two.
double float_flops(const ComputeCounts& ops);

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_OP_COUNTS_H
