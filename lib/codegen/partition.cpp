#include "partition.h"

#include "kiln/ir/linear_form.h"

#include <map>
#include <optional>

namespace kiln::codegen {

using ir::Expr;
using schedule::Stmt;
using schedule::StmtKind;

namespace {

/// Copies of the loop bodies grow the code: at most this many splits a
/// kernel (a conv tile with 16 unrolled copies of a vector loop needs 17).
constexpr int kMaxPartitions = 64;

using Extents = std::map<std::string, std::int64_t>;

/// A guard `a < b` as the form of `a - b` (true when negative); nullopt for
/// other conditions.
std::optional<ir::AtomicForm> guard_form(const Expr& cond) {
  const auto* c = cond.as<ir::Compare>();
  if (!c || c->op != ir::CompareOp::LT || c->a.type() != ir::ScalarType::I64 ||
      c->b.type() != ir::ScalarType::I64)
    return std::nullopt;
  return ir::linearize_with_atoms(c->a - c->b);
}

/// Whether a guard holds (true), fails (false) for every value of the loops
/// in `extents`, or depends on them (nullopt).
std::optional<bool> decided(const Expr& cond, const Extents& extents) {
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
std::optional<std::int64_t> true_prefix(const Expr& cond, const std::string& var,
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
Stmt make_loop(const std::string& var, std::int64_t first, std::int64_t extent,
               schedule::ForKind kind, const Stmt& body) {
  if (extent == 1)
    return schedule::substitute(body, {{var, Expr(first)}});
  Stmt shifted =
      first == 0 ? body : schedule::substitute(body, {{var, ir::Var::make(var) + Expr(first)}});
  return schedule::For::make(var, extent, kind, shifted);
}

class Partitioner {
public:
  Stmt visit(const Stmt& s) {
    if (!s.defined())
      return s;
    switch (s.kind()) {
    case StmtKind::For:
      return visit_for(s.as<schedule::For>());
    case StmtKind::Store:
      return s;
    case StmtKind::Allocate: {
      const auto* a = s.as<schedule::Allocate>();
      return schedule::Allocate::make(a->buffer, visit(a->body));
    }
    case StmtKind::IfThenElse:
      return visit_if(s.as<schedule::IfThenElse>());
    case StmtKind::Block: {
      std::vector<Stmt> stmts;
      for (const Stmt& c : s.as<schedule::Block>()->stmts)
        stmts.push_back(visit(c));
      return schedule::Block::make(std::move(stmts));
    }
    }
    return s;
  }

private:
  Stmt visit_for(const schedule::For* f) {
    std::optional<std::int64_t> split;
    if (f->for_kind != schedule::ForKind::Parallel && budget_ > 0)
      split = split_point(f);
    if (!split) {
      extents_[f->var] = f->extent;
      Stmt body = visit(f->body);
      extents_.erase(f->var);
      return schedule::For::make(f->var, f->extent, f->for_kind, body);
    }
    --budget_;
    Stmt head = make_loop(f->var, 0, *split, f->for_kind, f->body);
    Stmt tail = make_loop(f->var, *split, f->extent - *split, f->for_kind, f->body);
    return schedule::Block::make({visit(head), visit(tail)});
  }

  Stmt visit_if(const schedule::IfThenElse* i) {
    if (auto d = decided(i->cond, extents_)) {
      if (*d)
        return visit(i->then_case);
      return i->else_case.defined() ? visit(i->else_case) : schedule::Block::make({});
    }
    return schedule::IfThenElse::make(i->cond, visit(i->then_case), visit(i->else_case));
  }

  /// Where to split loop `f`: the first guard in its body that holds for a
  /// proper prefix of its iterations.
  std::optional<std::int64_t> split_point(const schedule::For* f) {
    Extents scope = extents_;
    scope[f->var] = f->extent;
    return find_split(f->body, f, scope);
  }

  std::optional<std::int64_t> find_split(const Stmt& s, const schedule::For* f, Extents& scope) {
    if (!s.defined())
      return std::nullopt;
    switch (s.kind()) {
    case StmtKind::For: {
      const auto* inner = s.as<schedule::For>();
      scope[inner->var] = inner->extent;
      auto r = find_split(inner->body, f, scope);
      scope.erase(inner->var);
      return r;
    }
    case StmtKind::Store:
      return std::nullopt;
    case StmtKind::Allocate:
      return find_split(s.as<schedule::Allocate>()->body, f, scope);
    case StmtKind::IfThenElse: {
      const auto* i = s.as<schedule::IfThenElse>();
      Extents others = scope;
      others.erase(f->var);
      auto p = true_prefix(i->cond, f->var, others);
      if (p && *p > 0 && *p < f->extent)
        return p;
      if (auto r = find_split(i->then_case, f, scope))
        return r;
      return find_split(i->else_case, f, scope);
    }
    case StmtKind::Block:
      for (const Stmt& c : s.as<schedule::Block>()->stmts)
        if (auto r = find_split(c, f, scope))
          return r;
      return std::nullopt;
    }
    return std::nullopt;
  }

  Extents extents_; ///< the loops around the statement being visited
  int budget_ = kMaxPartitions;
};

} // namespace

Stmt partition_tails(const Stmt& body) {
  return Partitioner().visit(body);
}

} // namespace kiln::codegen
