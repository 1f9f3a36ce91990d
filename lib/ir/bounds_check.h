// Private to lib/ir: the static check that every tensor read of a stage is
// in bounds (compute_dag.cpp calls it for each stage it validates).
#ifndef KILN_LIB_IR_BOUNDS_CHECK_H
#define KILN_LIB_IR_BOUNDS_CHECK_H

#include "kiln/ir/compute_dag.h"

#include <vector>

namespace kiln::ir {

/// Throws an "index-out-of-bounds" UserError when a read of `stage` is out
/// of bounds for some point of its iteration space. Proven only where it
/// can be exact: indices affine in the axes, under select conditions made
/// of comparisons of one axis with a constant (padding). Reads it cannot
/// judge (data-dependent or non-affine indices, other guards) pass; the
/// interpreter checks them at run time.
void check_access_bounds(const std::vector<Stage>& earlier, const Stage& stage);

} // namespace kiln::ir

#endif
