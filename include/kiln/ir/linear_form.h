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

/// An affine form over variables and opaque *atoms*: every subterm that is
/// not affine (`x % c`, `x / c`, min, max, a product of variables, a load, a
/// cast from a narrower type…) is kept whole as one atom, its operands put in
/// canonical form first, and equal atoms share one coefficient. So the
/// indices a fused loop leaves behind cancel: `f % 4 * 256 + j - f % 4 * 256`
/// is `j`. Unlike linearize(), this never fails on an i64 expression.
struct AtomicForm {
  /// Coefficients of variables and of atom keys (never 0).
  LinearForm linear;
  /// Atom key → the atom. Keys start with kAtomKeyPrefix, which no variable
  /// name does, and are private to one AtomicForm.
  std::map<std::string, Expr> atoms;

  static constexpr char kAtomKeyPrefix = '\x7f';
  static bool is_atom_key(const std::string& key) {
    return !key.empty() && key[0] == kAtomKeyPrefix;
  }
  /// Whether an atom with a non-zero coefficient uses variable `var`.
  bool atoms_use(const std::string& var) const;
};

/// The atomic form of an integer expression; nullopt when it is not an
/// integer. A non-i64 expression is one atom as a whole.
std::optional<AtomicForm> linearize_with_atoms(const Expr& e);

/// Rebuilds an expression from an atomic form: variables, then atoms, then
/// the constant.
Expr to_expr(const AtomicForm& form);

/// `form` without the term of `key` (a variable or an atom key).
AtomicForm without(AtomicForm form, const std::string& key);

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
