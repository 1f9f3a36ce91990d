#include "unroll_loops.h"

#include "kiln/schedule/stmt_visitor.h"

namespace kiln::schedule {

/// Longest loop that unroll expands; longer ones stay serial loops.
constexpr std::int64_t kMaxUnrollExtent = 1024;

namespace {

class Unroller : public StmtMutator {
public:
  using StmtMutator::mutate;

protected:
  Stmt mutate(const For* f, const Stmt& self) override {
    Stmt body = mutate(f->body);
    // Very long loops stay loops: unrolling them only bloats the code.
    if (f->for_kind != ForKind::Unrolled || f->extent > kMaxUnrollExtent)
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
