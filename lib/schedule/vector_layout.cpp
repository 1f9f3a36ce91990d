// The storage order of the kernel's own buffers: the dimension a vector loop
// walks goes innermost.
//
// A buffer the kernel allocates (a cache_write tile, a cache_read panel, an
// intermediate stage) is private to it, so its layout is free. Bound
// inference gives it the stage's axis order, which is right when the
// vectorized axis is the stage's last one (x of an NCHW conv, j of a
// matmul). When a schedule vectorizes another axis (the output channels k of
// a conv, whose weights are packed for it), every access of that buffer in
// the vector loop would be a gather or a scatter, and a register tile that
// LLVM could keep in registers stays in memory. Moving that dimension last
// makes those accesses consecutive lanes instead. Halide leaves this to the
// user (Func::reorder_storage); kiln derives it, so that a sketch needs no
// extra decision for it.
#include "passes.h"

#include "kiln/ir/expr_visitor.h"

#include <map>
#include <optional>
#include <set>

namespace kiln::schedule {
namespace {

using ir::Expr;

/// How often each dimension of each allocated buffer is the one a vector
/// loop walks, weighted by how many times the access runs.
class VectorDimCounter : public ir::ExprVisitor {
public:
  using ExprVisitor::visit;
  std::set<std::string> allocated;
  std::map<std::string, std::map<size_t, std::int64_t>> votes;
  std::map<std::string, size_t> rank;

  void count(const Stmt& stmt, std::int64_t runs) {
    if (!stmt.defined())
      return;
    switch (stmt.kind()) {
    case StmtKind::For: {
      const auto* f = stmt.as<For>();
      bool vector = f->for_kind == ForKind::Vectorized;
      if (vector)
        vector_vars_.push_back(f->var);
      count(f->body, runs * (vector ? 1 : f->extent));
      if (vector)
        vector_vars_.pop_back();
      return;
    }
    case StmtKind::Store: {
      const auto* s = stmt.as<Store>();
      runs_ = runs;
      vote(s->buffer, s->indices);
      for (const Expr& i : s->indices)
        visit(i);
      visit(s->value);
      return;
    }
    case StmtKind::Allocate: {
      const auto* a = stmt.as<Allocate>();
      allocated.insert(a->buffer.name);
      count(a->body, runs);
      return;
    }
    case StmtKind::IfThenElse: {
      const auto* i = stmt.as<IfThenElse>();
      runs_ = runs;
      visit(i->cond);
      count(i->then_case, runs);
      count(i->else_case, runs);
      return;
    }
    case StmtKind::Block:
      for (const Stmt& s : stmt.as<Block>()->stmts)
        count(s, runs);
      return;
    }
  }

protected:
  void visit(const ir::Load* l) override {
    vote(l->tensor, l->indices);
    ExprVisitor::visit(l);
  }

private:
  /// An access votes for the one dimension whose index uses the innermost
  /// vector variable; none when no or several dimensions use it (a stencil
  /// index y + ry is still one dimension; x * W + y would be two).
  void vote(const std::string& buffer, const std::vector<Expr>& indices) {
    rank[buffer] = indices.size();
    if (vector_vars_.empty())
      return;
    const std::string& var = vector_vars_.back();
    std::optional<size_t> walked;
    for (size_t d = 0; d < indices.size(); ++d) {
      if (!ir::uses_var(indices[d], var))
        continue;
      if (walked)
        return;
      walked = d;
    }
    if (walked)
      votes[buffer][*walked] += runs_;
  }

  std::vector<std::string> vector_vars_;
  std::int64_t runs_ = 1;
};

/// Puts dimension `dim` of `buffer` last in every access.
class MoveDimLast : public ir::ExprMutator {
public:
  explicit MoveDimLast(const std::map<std::string, size_t>& moved) : moved_(moved) {}
  using ExprMutator::mutate;

  std::vector<Expr> permute(const std::string& buffer, const std::vector<Expr>& indices) const {
    auto it = moved_.find(buffer);
    if (it == moved_.end())
      return indices;
    std::vector<Expr> out;
    for (size_t d = 0; d < indices.size(); ++d)
      if (d != it->second)
        out.push_back(indices[d]);
    out.push_back(indices[it->second]);
    return out;
  }

  Stmt rewrite(const Stmt& stmt) {
    if (!stmt.defined())
      return stmt;
    switch (stmt.kind()) {
    case StmtKind::For: {
      const auto* f = stmt.as<For>();
      return For::make(f->var, f->extent, f->for_kind, rewrite(f->body));
    }
    case StmtKind::Store: {
      const auto* s = stmt.as<Store>();
      std::vector<Expr> indices;
      for (const Expr& i : s->indices)
        indices.push_back(mutate(i));
      return Store::make(s->buffer, permute(s->buffer, indices), mutate(s->value));
    }
    case StmtKind::Allocate: {
      const auto* a = stmt.as<Allocate>();
      Buffer buffer = a->buffer;
      auto it = moved_.find(buffer.name);
      if (it != moved_.end()) {
        std::int64_t extent = buffer.shape[it->second];
        buffer.shape.erase(buffer.shape.begin() + static_cast<std::ptrdiff_t>(it->second));
        buffer.shape.push_back(extent);
      }
      return Allocate::make(buffer, rewrite(a->body));
    }
    case StmtKind::IfThenElse: {
      const auto* i = stmt.as<IfThenElse>();
      return IfThenElse::make(mutate(i->cond), rewrite(i->then_case), rewrite(i->else_case));
    }
    case StmtKind::Block: {
      std::vector<Stmt> stmts;
      for (const Stmt& s : stmt.as<Block>()->stmts)
        stmts.push_back(rewrite(s));
      return Block::make(std::move(stmts));
    }
    }
    return stmt;
  }

protected:
  Expr mutate(const ir::Load* l, const Expr& self) override {
    Expr e = ExprMutator::mutate(l, self);
    const auto* load = e.as<ir::Load>();
    if (!moved_.count(load->tensor))
      return e;
    return ir::Load::make(load->tensor, permute(load->tensor, load->indices), load->type);
  }

private:
  const std::map<std::string, size_t>& moved_;
};

} // namespace

Stmt vector_dims_innermost(const Stmt& stmt) {
  VectorDimCounter counter;
  counter.count(stmt, 1);
  std::map<std::string, size_t> moved;
  for (const auto& [buffer, votes] : counter.votes) {
    if (!counter.allocated.count(buffer) || votes.empty())
      continue;
    // The dimension walked by the most vector lanes' worth of accesses;
    // ties keep the later one, so a buffer already right stays as it is.
    size_t best = votes.begin()->first;
    for (const auto& [dim, runs] : votes)
      if (runs >= votes.at(best))
        best = dim;
    if (best + 1 != counter.rank.at(buffer))
      moved[buffer] = best;
  }
  if (moved.empty())
    return stmt;
  MoveDimLast mover(moved);
  return mover.rewrite(stmt);
}

} // namespace kiln::schedule
