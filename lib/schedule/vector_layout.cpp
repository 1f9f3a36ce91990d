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
#include "vector_layout.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/schedule/stmt_visitor.h"

#include <map>
#include <optional>
#include <set>

namespace kiln::schedule {

using ir::Expr;

namespace {

/// How often each dimension of each allocated buffer is the one a vector
/// loop walks, weighted by how many times the access runs.
class VectorDimCounter : public StmtVisitor {
public:
  std::set<std::string> allocated;
  std::map<std::string, std::map<size_t, std::int64_t>> votes;
  std::map<std::string, size_t> rank;

  using StmtVisitor::visit;

  void visit(const For* f) override {
    bool vector = f->for_kind == ForKind::Vectorized;
    std::int64_t outer = runs_;
    if (vector)
      vector_vars_.push_back(f->var);
    else
      runs_ *= f->extent;
    visit(f->body);
    runs_ = outer;
    if (vector)
      vector_vars_.pop_back();
  }

  void visit(const Store* s) override {
    vote(s->buffer, s->indices);
    StmtVisitor::visit(s);
  }

  void visit(const Allocate* a) override {
    allocated.insert(a->buffer.name);
    StmtVisitor::visit(a);
  }

protected:
  void visit_expr(const ir::Expr& e) override { LoadVoter(*this).visit(e); }

private:
  /// Every load in an expression votes like a store.
  class LoadVoter : public ir::ExprVisitor {
  public:
    explicit LoadVoter(VectorDimCounter& counter) : counter_(counter) {}
    using ExprVisitor::visit;
    void visit(const ir::Load* l) override {
      counter_.vote(l->tensor, l->indices);
      ExprVisitor::visit(l);
    }

  private:
    VectorDimCounter& counter_;
  };

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
  std::int64_t runs_ = 1; ///< how often the statement being visited runs
};

/// Buffer → the dimension that goes last.
using MovedDims = std::map<std::string, size_t>;

/// Loads of moved buffers with the moved dimension last.
class LoadPermuter : public ir::ExprMutator {
public:
  explicit LoadPermuter(const MovedDims& moved) : moved_(moved) {}
  using ExprMutator::mutate;

protected:
  Expr mutate(const ir::Load* l, const Expr& self) override;

private:
  const MovedDims& moved_;
};

/// Puts the moved dimension last in every access and allocation.
class MoveDimLast : public StmtMutator {
public:
  explicit MoveDimLast(const MovedDims& moved) : moved_(moved) {}
  using StmtMutator::mutate;

protected:
  Stmt mutate(const Store* s, const Stmt& self) override;
  Stmt mutate(const Allocate* a, const Stmt& self) override;
  Expr mutate_expr(const Expr& e) override { return LoadPermuter(moved_).mutate(e); }

private:
  const MovedDims& moved_;
};

} // namespace

/// The indices of an access of `buffer`, with its moved dimension last.
static std::vector<Expr> permute(const MovedDims& moved, const std::string& buffer,
                                 const std::vector<Expr>& indices) {
  auto it = moved.find(buffer);
  if (it == moved.end())
    return indices;
  std::vector<Expr> out;
  for (size_t d = 0; d < indices.size(); ++d)
    if (d != it->second)
      out.push_back(indices[d]);
  out.push_back(indices[it->second]);
  return out;
}

Expr LoadPermuter::mutate(const ir::Load* l, const Expr& self) {
  Expr e = ExprMutator::mutate(l, self);
  const auto* load = e.as<ir::Load>();
  if (!moved_.count(load->tensor))
    return e;
  return ir::Load::make(load->tensor, permute(moved_, load->tensor, load->indices), load->type);
}

Stmt MoveDimLast::mutate(const Store* s, const Stmt& self) {
  Stmt stmt = StmtMutator::mutate(s, self);
  if (!moved_.count(s->buffer))
    return stmt;
  const auto* store = stmt.as<Store>();
  return Store::make(store->buffer, permute(moved_, store->buffer, store->indices), store->value);
}

/// The buffer with dimension `dim` moved last.
static Buffer with_dim_last(Buffer buffer, size_t dim) {
  std::int64_t extent = buffer.shape[dim];
  buffer.shape.erase(buffer.shape.begin() + static_cast<std::ptrdiff_t>(dim));
  buffer.shape.push_back(extent);
  return buffer;
}

Stmt MoveDimLast::mutate(const Allocate* a, const Stmt& self) {
  Stmt stmt = StmtMutator::mutate(a, self);
  auto it = moved_.find(a->buffer.name);
  if (it == moved_.end())
    return stmt;
  const auto* alloc = stmt.as<Allocate>();
  return Allocate::make(with_dim_last(alloc->buffer, it->second), alloc->body);
}

VectorLayout::VectorLayout(const std::vector<Stmt>& nests, const std::vector<Buffer>& packed) {
  VectorDimCounter counter;
  for (const Stmt& nest : nests)
    if (nest.defined())
      counter.visit(nest);
  for (const Buffer& b : packed)
    counter.allocated.insert(b.name);
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
      moved_[buffer] = best;
  }
}

Stmt VectorLayout::apply(const Stmt& stmt) const {
  if (moved_.empty() || !stmt.defined())
    return stmt;
  return MoveDimLast(moved_).mutate(stmt);
}

Buffer VectorLayout::apply(Buffer buffer) const {
  auto it = moved_.find(buffer.name);
  return it == moved_.end() ? buffer : with_dim_last(std::move(buffer), it->second);
}

Stmt vector_dims_innermost(const Stmt& stmt) {
  return VectorLayout({stmt}, {}).apply(stmt);
}

} // namespace kiln::schedule
