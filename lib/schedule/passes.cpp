#include "passes.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"

namespace kiln::schedule {

/// How steps_of counts a vector loop.
enum class VectorCount {
  Statements, ///< one step per statement: its lanes run together
  Lanes,      ///< one step per lane: the size of the code it becomes
};

/// Statements executed by one run of `stmt` (a loop counts extent × body).
static std::int64_t steps_of(const Stmt& stmt, VectorCount vectors) {
  switch (stmt.kind()) {
  case StmtKind::For: {
    const auto* f = stmt.as<For>();
    bool one_step = f->for_kind == ForKind::Vectorized && vectors == VectorCount::Statements;
    return (one_step ? 1 : f->extent) * steps_of(f->body, vectors);
  }
  case StmtKind::Store:
    return 1;
  case StmtKind::Allocate:
    return steps_of(stmt.as<Allocate>()->body, vectors);
  case StmtKind::IfThenElse: {
    const auto* i = stmt.as<IfThenElse>();
    return std::max(steps_of(i->then_case, vectors),
                    i->else_case.defined() ? steps_of(i->else_case, vectors) : std::int64_t{0});
  }
  case StmtKind::Block: {
    std::int64_t n = 0;
    for (const Stmt& s : stmt.as<Block>()->stmts)
      n += steps_of(s, vectors);
    return n;
  }
  }
  return 1;
}

/// auto_unroll never expands a loop into more than this many scalar lanes
/// of stores (128 AVX-512 or 256 AVX2 f32 vectors: a 4x64 register tile
/// unrolled 8 times along k). Larger unrolled bodies spill registers, so
/// they are slow kernels, and LLVM takes up to seconds to compile each one:
/// a few of them used to cost a third of a tuning run's build time.
constexpr std::int64_t kMaxAutoUnrollLanes = 2048;

Stmt mark_auto_unroll(const Stmt& stmt, std::int64_t max_step) {
  if (max_step <= 0 || !stmt.defined())
    return stmt;
  switch (stmt.kind()) {
  case StmtKind::For: {
    const auto* f = stmt.as<For>();
    Stmt body = mark_auto_unroll(f->body, max_step);
    ForKind kind = f->for_kind;
    if (kind == ForKind::Serial &&
        f->extent * steps_of(body, VectorCount::Statements) <= max_step &&
        f->extent * steps_of(body, VectorCount::Lanes) <= kMaxAutoUnrollLanes)
      kind = ForKind::Unrolled;
    if (kind == f->for_kind && body.same_as(f->body))
      return stmt;
    return For::make(f->var, f->extent, kind, body);
  }
  case StmtKind::Store:
    return stmt;
  case StmtKind::Allocate: {
    const auto* a = stmt.as<Allocate>();
    return Allocate::make(a->buffer, mark_auto_unroll(a->body, max_step));
  }
  case StmtKind::IfThenElse: {
    const auto* i = stmt.as<IfThenElse>();
    return IfThenElse::make(i->cond, mark_auto_unroll(i->then_case, max_step),
                            mark_auto_unroll(i->else_case, max_step));
  }
  case StmtKind::Block: {
    std::vector<Stmt> stmts;
    for (const Stmt& s : stmt.as<Block>()->stmts)
      stmts.push_back(mark_auto_unroll(s, max_step));
    return Block::make(std::move(stmts));
  }
  }
  return stmt;
}

/// Longest loop that unroll expands; longer ones stay serial loops.
constexpr std::int64_t kMaxUnrollExtent = 1024;

Stmt unroll_loops(const Stmt& stmt) {
  if (!stmt.defined())
    return stmt;
  switch (stmt.kind()) {
  case StmtKind::For: {
    const auto* f = stmt.as<For>();
    Stmt body = unroll_loops(f->body);
    // Very long loops stay loops: unrolling them only bloats the code.
    if (f->for_kind != ForKind::Unrolled || f->extent > kMaxUnrollExtent)
      return body.same_as(f->body) ? stmt : For::make(f->var, f->extent, f->for_kind, body);
    std::vector<Stmt> copies;
    for (std::int64_t i = 0; i < f->extent; ++i)
      copies.push_back(substitute(body, {{f->var, ir::Expr(i)}}));
    return Block::make(std::move(copies));
  }
  case StmtKind::Store:
    return stmt;
  case StmtKind::Allocate: {
    const auto* a = stmt.as<Allocate>();
    return Allocate::make(a->buffer, unroll_loops(a->body));
  }
  case StmtKind::IfThenElse: {
    const auto* i = stmt.as<IfThenElse>();
    return IfThenElse::make(i->cond, unroll_loops(i->then_case), unroll_loops(i->else_case));
  }
  case StmtKind::Block: {
    std::vector<Stmt> stmts;
    for (const Stmt& s : stmt.as<Block>()->stmts)
      stmts.push_back(unroll_loops(s));
    return Block::make(std::move(stmts));
  }
  }
  return stmt;
}

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
