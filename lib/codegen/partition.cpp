#include "partition.h"

#include "kiln/ir/linear_form.h"
#include "kiln/schedule/stmt_visitor.h"

#include <map>
#include <optional>

namespace kiln::codegen {

using ir::Expr;
using schedule::Stmt;

/// Copies of the loop bodies grow the code: at most this many splits a
/// kernel (a conv tile with 16 unrolled copies of a vector loop needs 17).
constexpr int kMaxPartitions = 64;

using Extents = std::map<std::string, std::int64_t>;

/// A guard `a < b` as the form of `a - b` (true when negative); nullopt for
/// other conditions.
static std::optional<ir::AtomicForm> guard_form(const Expr& cond) {
  const auto* c = cond.as<ir::Compare>();
  if (!c || c->op != ir::CompareOp::LT || c->a.type() != ir::ScalarType::I64 ||
      c->b.type() != ir::ScalarType::I64)
    return std::nullopt;
  return ir::linearize_with_atoms(c->a - c->b);
}

/// Whether a guard holds (true), fails (false) for every value of the loops
/// in `extents`, or depends on them (nullopt).
static std::optional<bool> decided(const Expr& cond, const Extents& extents) {
  auto form = guard_form(cond);
  if (!form)
    return std::nullopt;
  auto b = ir::bounds_of(ir::to_expr(*form), extents);
  if (!b)
    return std::nullopt;
  if (b->max < 0)
    return true;
  if (b->min >= 0)
    return false;
  return std::nullopt;
}

/// How many first iterations of loop `var` a guard holds in, whatever the
/// values of the other loops in `extents`; nullopt when it cannot tell.
static std::optional<std::int64_t> true_prefix(const Expr& cond, const std::string& var,
                                               const Extents& extents) {
  auto form = guard_form(cond);
  if (!form || form->atoms_use(var))
    return std::nullopt;
  const std::int64_t c = form->linear.coeff(var);
  if (c <= 0)
    return std::nullopt;
  auto rest = ir::bounds_of(ir::to_expr(ir::without(*form, var)), extents);
  if (!rest)
    return std::nullopt;
  // c × v + rest < 0 for every rest when c × v <= -1 - rest.max.
  return ir::floor_div(-1 - rest->max, c) + 1;
}

/// A loop, or its body at the single value when the extent is 1.
static Stmt make_loop(const std::string& var, std::int64_t first, std::int64_t extent,
                      schedule::ForKind kind, const Stmt& body) {
  if (extent == 1)
    return schedule::substitute(body, {{var, Expr(first)}});
  Stmt shifted =
      first == 0 ? body : schedule::substitute(body, {{var, ir::Var::make(var) + Expr(first)}});
  return schedule::For::make(var, extent, kind, shifted);
}

namespace {

/// The first guard in a loop's body that holds for a proper prefix of the
/// loop's iterations, whatever the values of the other loops.
class SplitFinder : public schedule::StmtVisitor {
public:
  SplitFinder(const schedule::For* loop, Extents scope) : loop_(loop), scope_(std::move(scope)) {}

  std::optional<std::int64_t> split;

  using StmtVisitor::visit;

  void visit(const schedule::For* inner) override {
    if (split)
      return;
    scope_[inner->var] = inner->extent;
    visit(inner->body);
    scope_.erase(inner->var);
  }

  void visit(const schedule::IfThenElse* i) override {
    if (split)
      return;
    Extents others = scope_;
    others.erase(loop_->var);
    auto p = true_prefix(i->cond, loop_->var, others);
    if (p && *p > 0 && *p < loop_->extent) {
      split = p;
      return;
    }
    StmtVisitor::visit(i);
  }

private:
  const schedule::For* loop_;
  Extents scope_; ///< the loops around the statement being visited
};

class Partitioner : public schedule::StmtMutator {
public:
  using StmtMutator::mutate;

protected:
  Stmt mutate(const schedule::For* f, const Stmt& self) override {
    std::optional<std::int64_t> split;
    if (f->for_kind != schedule::ForKind::Parallel && budget_ > 0)
      split = split_point(f);
    if (!split) {
      extents_[f->var] = f->extent;
      Stmt stmt = StmtMutator::mutate(f, self);
      extents_.erase(f->var);
      return stmt;
    }
    --budget_;
    Stmt head = make_loop(f->var, 0, *split, f->for_kind, f->body);
    Stmt tail = make_loop(f->var, *split, f->extent - *split, f->for_kind, f->body);
    return schedule::Block::make({mutate(head), mutate(tail)});
  }

  Stmt mutate(const schedule::IfThenElse* i, const Stmt& self) override {
    if (auto d = decided(i->cond, extents_)) {
      if (*d)
        return mutate(i->then_case);
      return i->else_case.defined() ? mutate(i->else_case) : schedule::Block::make({});
    }
    return StmtMutator::mutate(i, self);
  }

private:
  /// Where to split loop `f`: the first guard in its body that holds for a
  /// proper prefix of its iterations.
  std::optional<std::int64_t> split_point(const schedule::For* f) const {
    Extents scope = extents_;
    scope[f->var] = f->extent;
    SplitFinder finder(f, std::move(scope));
    finder.visit(f->body);
    return finder.split;
  }

  Extents extents_; ///< the loops around the statement being visited
  int budget_ = kMaxPartitions;
};

} // namespace

Stmt partition_tails(const Stmt& body) {
  return Partitioner().mutate(body);
}

} // namespace kiln::codegen
