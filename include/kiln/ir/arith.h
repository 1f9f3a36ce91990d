// Integer arithmetic as the op language defines it, in one place: division
// and modulo round toward negative infinity (so `(i - 1) % 4` of i = 0 is 3,
// as an index must be), and interval arithmetic over such values, which
// bound inference, loop partitioning and the cost model's features use to
// bound an index over the ranges of its loops.
#ifndef KILN_IR_ARITH_H
#define KILN_IR_ARITH_H

#include "kiln/ir/expr.h"

#include <cstdint>
#include <optional>

namespace kiln::ir {

/// a / b rounded toward negative infinity; `b` must not be 0.
std::int64_t floor_div(std::int64_t a, std::int64_t b);
/// a - floor_div(a, b) * b: in [0, b) for b > 0; `b` must not be 0.
std::int64_t floor_mod(std::int64_t a, std::int64_t b);

/// The values an integer expression can take: [min, max].
struct Interval {
  std::int64_t min = 0, max = 0;
};

/// The interval of `a op b` for `a` in `x` and `b` in `y`; nullopt when it
/// cannot be bounded (division or modulo by anything but a positive
/// constant).
std::optional<Interval> combine(const Interval& x, const Interval& y, BinaryOp op);

} // namespace kiln::ir

#endif // KILN_IR_ARITH_H
