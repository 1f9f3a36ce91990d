// Affine views of integer index expressions: sum of coefficient × variable
// plus a constant. Bound inference uses them to compute the region a
// consumer reads, and codegen to tell contiguous vector accesses from
// broadcasts and gathers.
#ifndef KILN_IR_LINEAR_FORM_H
#define KILN_IR_LINEAR_FORM_H

#include "kiln/ir/expr.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln::ir {

struct LinearForm {
  std::map<std::string, std::int64_t> coeffs; ///< variable → coefficient (never 0)
  std::int64_t constant = 0;

  std::int64_t coeff(const std::string& var) const;
  bool operator==(const LinearForm&) const = default;
};

/// The affine form of an integer expression, or nullopt when it is not affine
/// (division, modulo, min, max, select, loads of variables…).
std::optional<LinearForm> linearize(const Expr& e);

/// Rebuilds an expression from a form (terms in variable-name order).
Expr to_expr(const LinearForm& form);

/// The smallest and largest value of an integer expression when every
/// variable v ranges over [0, extent(v) - 1]; `extent` returns 0 for a
/// variable whose range is unknown. nullopt when no bound can be given.
struct Interval {
  std::int64_t min = 0, max = 0;
};
std::optional<Interval> bounds_of(const Expr& e,
                                  const std::map<std::string, std::int64_t>& extents);

} // namespace kiln::ir

#endif
