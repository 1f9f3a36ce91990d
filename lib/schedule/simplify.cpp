#include "simplify.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"

namespace kiln::schedule {

/// The canonical sum of an index expression (linearised once, at its top:
/// linearising every subexpression would be quadratic). Non-affine subterms
/// are atoms, so the `f % 4 * 256` that a fused loop puts in both a region
/// base and an index cancels.
static ir::Expr simplify_index(const ir::Expr& e) {
  if (e.type() != ir::ScalarType::I64)
    return e;
  auto form = ir::linearize_with_atoms(e);
  return form ? ir::to_expr(*form) : e;
}

namespace {

/// Simplifies the indices of loads and the operands of comparisons.
class Simplifier : public ir::ExprMutator {
public:
  using ExprMutator::mutate;

protected:
  ir::Expr mutate(const ir::Load* l, const ir::Expr& self) override {
    std::vector<ir::Expr> indices;
    bool changed = false;
    for (const ir::Expr& i : l->indices) {
      indices.push_back(simplify_index(mutate(i)));
      changed |= !indices.back().same_as(i);
    }
    return changed ? ir::Load::make(l->tensor, std::move(indices), l->type) : self;
  }
  ir::Expr mutate(const ir::Compare* c, const ir::Expr& self) override {
    ir::Expr a = simplify_index(mutate(c->a)), b = simplify_index(mutate(c->b));
    return a.same_as(c->a) && b.same_as(c->b) ? self : ir::Compare::make(c->op, a, b);
  }
};

} // namespace

ir::Expr simplify_expr(const ir::Expr& expr) {
  return simplify_index(Simplifier().mutate(expr));
}

Stmt simplify(const Stmt& stmt) {
  return map_exprs(stmt, simplify_expr);
}

} // namespace kiln::schedule
