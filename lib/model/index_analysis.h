// Private to model: what the features need to know of an index expression
// that may not be affine (the div/mod of fused loops): its value at a point
// of the loop variables, and its interval over the loop ranges.
#ifndef KILN_LIB_MODEL_INDEX_ANALYSIS_H
#define KILN_LIB_MODEL_INDEX_ANALYSIS_H

#include "kiln/ir/arith.h"
#include "kiln/ir/expr.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::model::detail {

/// x op y as an index of the op language computes it, except that division
/// and modulo by 0 give 0: the evaluators below set variables to 0 or 1, so
/// a divisor made of variables can be 0 at their point.
inline std::int64_t eval_binary(ir::BinaryOp op, std::int64_t x, std::int64_t y) {
  switch (op) {
  case ir::BinaryOp::Add:
    return x + y;
  case ir::BinaryOp::Sub:
    return x - y;
  case ir::BinaryOp::Mul:
    return x * y;
  case ir::BinaryOp::Div:
    return y == 0 ? 0 : ir::floor_div(x, y);
  case ir::BinaryOp::Mod:
    return y == 0 ? 0 : ir::floor_mod(x, y);
  case ir::BinaryOp::Min:
    return std::min(x, y);
  case ir::BinaryOp::Max:
    return std::max(x, y);
  }
  return 0;
}

/// Integer value of an index expression with the variable `one` at 1 and
/// every other variable at 0 (`one` empty: all at 0). With all at 0 this is
/// the constant term of an affine index; the difference of the two is a
/// loop's stride, also through the floor divisions of fused loops.
std::int64_t eval_index(const ir::Expr& e, std::string_view one);

/// Loop variables and their extents, for interval().
using LoopRanges = std::vector<std::pair<std::string_view, std::int64_t>>;

/// The smallest and largest value of an index when each loop variable ranges
/// over [0, extent); nullopt when it cannot tell. ir::bounds_of does the
/// same through a map of names; this runs for every level of every
/// non-affine index, so it scans a short list.
std::optional<ir::Interval> interval(const ir::Expr& e, const LoopRanges& ranges);

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_INDEX_ANALYSIS_H
