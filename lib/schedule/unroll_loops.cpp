#include "unroll_loops.h"

#include "kiln/schedule/stmt_visitor.h"

namespace kiln::schedule {

/// Longest loop that unroll expands; longer ones stay serial loops.
constexpr std::int64_t kMaxUnrollExtent = 1024;
/// Most statements one unrolled loop may expand to: nested unrolled loops
/// multiply (three of 1024 would be a billion copies), and past this the
/// code only bloats.
constexpr std::int64_t kMaxUnrolledStores = 1 << 16;

namespace {

/// Stores in a statement, stopping once past `limit`.
class StoreCounter : public StmtVisitor {
public:
  explicit StoreCounter(std::int64_t limit) : limit_(limit) {}
  using StmtVisitor::visit;
  void visit(const Store*) override { ++stores_; }
  void visit(const Block* b) override {
    for (const Stmt& s : b->stmts)
      if (stores_ <= limit_)
        visit(s);
  }
  std::int64_t count(const Stmt& s) {
    visit(s);
    return stores_;
  }

private:
  std::int64_t limit_;
  std::int64_t stores_ = 0;
};

class Unroller : public StmtMutator {
public:
  using StmtMutator::mutate;

protected:
  Stmt mutate(const For* f, const Stmt& self) override {
    Stmt body = mutate(f->body);
    // Very long loops stay loops: unrolling them only bloats the code.
    if (f->for_kind != ForKind::Unrolled || f->extent > kMaxUnrollExtent ||
        f->extent * StoreCounter(kMaxUnrolledStores).count(body) > kMaxUnrolledStores)
      return body.same_as(f->body) ? self : For::make(f->var, f->extent, f->for_kind, body);
    std::vector<Stmt> copies;
    for (std::int64_t i = 0; i < f->extent; ++i)
      copies.push_back(substitute(body, {{f->var, ir::Expr(i)}}));
    return Block::make(std::move(copies));
  }
};

} // namespace

Stmt unroll_loops(const Stmt& stmt) {
  return Unroller().mutate(stmt);
}

} // namespace kiln::schedule
