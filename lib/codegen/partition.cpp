#include "partition.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/expr_visitor.h"
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

/// A comparison of integers as the form of an expression that is negative
/// exactly when it holds (`a < b` is a - b, `a >= b` is b - a - 1); nullopt
/// for other conditions.
static std::optional<ir::AtomicForm> negative_form(const Expr& cond) {
  const auto* c = cond.as<ir::Compare>();
  if (!c || c->a.type() != ir::ScalarType::I64 || c->b.type() != ir::ScalarType::I64)
    return std::nullopt;
  switch (c->op) {
  case ir::CompareOp::LT:
    return ir::linearize_with_atoms(c->a - c->b);
  case ir::CompareOp::LE:
    return ir::linearize_with_atoms(c->a - c->b - Expr(1));
  case ir::CompareOp::GT:
    return ir::linearize_with_atoms(c->b - c->a);
  case ir::CompareOp::GE:
    return ir::linearize_with_atoms(c->b - c->a - Expr(1));
  default:
    return std::nullopt;
  }
}

/// The conjuncts of a condition: `a && (b && c)` is a, b, c.
static void add_conjuncts(const Expr& cond, std::vector<Expr>& out) {
  if (const auto* l = cond.as<ir::Logical>(); l && l->op == ir::LogicalOp::And) {
    add_conjuncts(l->a, out);
    add_conjuncts(l->b, out);
    return;
  }
  out.push_back(cond);
}

static std::vector<Expr> conjuncts(const Expr& cond) {
  std::vector<Expr> out;
  add_conjuncts(cond, out);
  return out;
}

/// Whether a comparison holds (true), fails (false) for every value of the
/// loops in `extents`, or depends on them (nullopt).
static std::optional<bool> decided(const Expr& cond, const Extents& extents) {
  auto form = negative_form(cond);
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

namespace {

/// A condition once the loops' ranges have decided what they can of it.
struct Reduced {
  enum class Outcome { True, False, Open } outcome;
  Expr rest; ///< the undecided conjuncts (Open), the same node if none was decided
};

} // namespace

static Reduced reduce(const Expr& cond, const Extents& extents) {
  std::vector<Expr> open;
  bool dropped = false;
  for (const Expr& part : conjuncts(cond)) {
    auto d = decided(part, extents);
    if (d && !*d)
      return {Reduced::Outcome::False, Expr()};
    if (d)
      dropped = true;
    else
      open.push_back(part);
  }
  if (open.empty())
    return {Reduced::Outcome::True, Expr()};
  if (!dropped)
    return {Reduced::Outcome::Open, cond};
  Expr rest = open.front();
  for (size_t i = 1; i < open.size(); ++i)
    rest = ir::logical_and(rest, open[i]);
  return {Reduced::Outcome::Open, rest};
}

/// Where loop `var` over [0, extent) may split for a comparison: p in
/// (0, extent) such that the comparison holds for every v < p (a positive
/// coefficient on var) or every v >= p (a negative one, only when
/// `suffixes`), whatever the values of the other loops in `others`;
/// nullopt when there is no such proper split or it cannot tell.
static std::optional<std::int64_t> split_for(const Expr& cond, const std::string& var,
                                             std::int64_t extent, const Extents& others,
                                             bool suffixes) {
  auto form = negative_form(cond);
  if (!form || form->atoms_use(var))
    return std::nullopt;
  const std::int64_t c = form->linear.coeff(var);
  if (c == 0 || (c < 0 && !suffixes))
    return std::nullopt;
  auto rest = ir::bounds_of(ir::to_expr(ir::without(*form, var)), others);
  if (!rest)
    return std::nullopt;
  // c × v + rest < 0 for every rest when c × v <= k.
  const std::int64_t k = -1 - rest->max;
  const std::int64_t p = c > 0 ? ir::floor_div(k, c) + 1 : -ir::floor_div(-k, c);
  if (p <= 0 || p >= extent)
    return std::nullopt;
  return p;
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

/// The conditions of the selects in an expression, as conjuncts.
class SelectConditions : public ir::ExprVisitor {
public:
  using ExprVisitor::visit;
  std::vector<Expr> found;

  void visit(const ir::Select* s) override {
    add_conjuncts(s->cond, found);
    ExprVisitor::visit(s);
  }
};

/// The first condition in a loop's body that splits it (split_for).
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
    // A vector loop splits at the end of a tail, not at a padding column.
    try_conditions(conjuncts(i->cond), !is_vector());
    StmtVisitor::visit(i);
  }

protected:
  void visit_expr(const Expr& e) override {
    if (split || is_vector())
      return;
    SelectConditions selects;
    selects.visit(e);
    try_conditions(selects.found, true);
  }

private:
  bool is_vector() const { return loop_->for_kind == schedule::ForKind::Vectorized; }

  void try_conditions(const std::vector<Expr>& conds, bool suffixes) {
    if (split)
      return;
    Extents others = scope_;
    others.erase(loop_->var);
    for (const Expr& cond : conds)
      if ((split = split_for(cond, loop_->var, loop_->extent, others, suffixes)))
        return;
  }

  const schedule::For* loop_;
  Extents scope_; ///< the loops around the statement being visited
};

/// Takes out of every select's condition what the loops' ranges decide.
class SelectFolder : public ir::ExprMutator {
public:
  explicit SelectFolder(const Extents& extents) : extents_(extents) {}

  using ExprMutator::mutate;

protected:
  Expr mutate(const ir::Select* node, const Expr& self) override {
    Expr e = ExprMutator::mutate(node, self);
    const auto* s = e.as<ir::Select>();
    Reduced r = reduce(s->cond, extents_);
    switch (r.outcome) {
    case Reduced::Outcome::True:
      return s->t;
    case Reduced::Outcome::False:
      return s->f;
    case Reduced::Outcome::Open:
      break;
    }
    return r.rest.same_as(s->cond) ? e : ir::Select::make(r.rest, s->t, s->f);
  }

private:
  const Extents& extents_;
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
    Reduced r = reduce(i->cond, extents_);
    switch (r.outcome) {
    case Reduced::Outcome::True:
      return mutate(i->then_case);
    case Reduced::Outcome::False:
      return i->else_case.defined() ? mutate(i->else_case) : schedule::Block::make({});
    case Reduced::Outcome::Open:
      break;
    }
    if (r.rest.same_as(i->cond))
      return StmtMutator::mutate(i, self);
    return schedule::IfThenElse::make(r.rest, mutate(i->then_case), mutate(i->else_case));
  }

  Expr mutate_expr(const Expr& e) override { return SelectFolder(extents_).mutate(e); }

private:
  /// Where to split loop `f`: the first condition in its body that holds
  /// for a proper prefix or suffix of its iterations.
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
