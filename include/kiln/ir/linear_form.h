// Affine views of integer index expressions: sum of coefficient × variable
// plus a constant. Bound inference uses them to compute the region a
// consumer reads, and codegen to tell contiguous vector accesses from
// broadcasts and gathers.
#ifndef KILN_IR_LINEAR_FORM_H
#define KILN_IR_LINEAR_FORM_H

#include "kiln/ir/arith.h"
#include "kiln/ir/expr.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::ir {

/// Variable → coefficient, in name order, never 0. A sorted flat vector:
/// index forms have a handful of terms, and the map node per term they had
/// made linearising a leading cost of lowering and of feature extraction.
class Coeffs {
public:
  using Term = std::pair<std::string, std::int64_t>;
  Coeffs() = default;
  Coeffs(std::initializer_list<Term> terms);

  /// The coefficient of `var` (0 when absent).
  std::int64_t get(std::string_view var) const;
  bool count(std::string_view var) const { return find(var) != terms_.end(); }
  /// Adds `k` to the coefficient of `var`, dropping the term when it is 0.
  void add(std::string_view var, std::int64_t k);
  void erase(std::string_view var);
  /// Multiplies every coefficient by `k` (not 0).
  void scale(std::int64_t k);

  bool empty() const { return terms_.empty(); }
  std::size_t size() const { return terms_.size(); }
  std::vector<Term>::const_iterator begin() const { return terms_.begin(); }
  std::vector<Term>::const_iterator end() const { return terms_.end(); }
  bool operator==(const Coeffs&) const = default;

private:
  std::vector<Term>::const_iterator find(std::string_view var) const;
  std::vector<Term> terms_;
};

struct LinearForm {
  Coeffs coeffs; ///< variable → coefficient (never 0)
  std::int64_t constant = 0;

  std::int64_t coeff(std::string_view var) const { return coeffs.get(var); }
  bool operator==(const LinearForm&) const = default;
};

/// `a` + sign × `b`.
LinearForm added(LinearForm a, const LinearForm& b, std::int64_t sign);
/// `f` × k (the empty form for k = 0).
LinearForm scaled(LinearForm f, std::int64_t k);

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
std::optional<Interval> bounds_of(const Expr& e,
                                  const std::map<std::string, std::int64_t>& extents);
/// bounds_of() an affine form, term by term (exact: each variable appears
/// once); nullopt when a variable's range is unknown.
std::optional<Interval> bounds_of(const LinearForm& form,
                                  const std::map<std::string, std::int64_t>& extents);

} // namespace kiln::ir

#endif
