#include "kiln/ir/arith.h"

#include "kiln/support/error.h"

#include <algorithm>

namespace kiln::ir {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  KILN_ASSERT(b != 0, "floor_div by zero");
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::int64_t floor_mod(std::int64_t a, std::int64_t b) {
  return a - floor_div(a, b) * b;
}

std::optional<Interval> combine(const Interval& x, const Interval& y, BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return Interval{x.min + y.min, x.max + y.max};
  case BinaryOp::Sub:
    return Interval{x.min - y.max, x.max - y.min};
  case BinaryOp::Mul: {
    const std::int64_t c[] = {x.min * y.min, x.min * y.max, x.max * y.min, x.max * y.max};
    return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  case BinaryOp::Div:
    if (y.min != y.max || y.min <= 0)
      return std::nullopt;
    return Interval{floor_div(x.min, y.min), floor_div(x.max, y.min)};
  case BinaryOp::Mod: {
    if (y.min != y.max || y.min <= 0)
      return std::nullopt;
    const std::int64_t m = y.min;
    // Within one block of m the remainders keep their order.
    if (floor_div(x.min, m) == floor_div(x.max, m))
      return Interval{floor_mod(x.min, m), floor_mod(x.max, m)};
    return Interval{0, m - 1};
  }
  case BinaryOp::Min:
    return Interval{std::min(x.min, y.min), std::min(x.max, y.max)};
  case BinaryOp::Max:
    return Interval{std::max(x.min, y.min), std::max(x.max, y.max)};
  }
  return std::nullopt;
}

} // namespace kiln::ir
