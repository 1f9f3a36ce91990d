#include "statement_scan.h"

#include "index_analysis.h"

#include "kiln/ir/expr_visitor.h"

#include <cstring>

namespace kiln::model::detail {

void Scanner::clear() {
  loads.clear();
  bases.clear();
  consts.clear();
}

std::uint64_t Scanner::hash(const ir::Expr& e) {
  if (!e.defined())
    return 1;
  if (e.type() == ir::ScalarType::I64) {
    index(e);
    return 2;
  }
  std::uint64_t h =
      mix(static_cast<std::uint64_t>(e.kind()) + 16, static_cast<std::uint64_t>(e.type()));
  switch (e.kind()) {
  case ir::ExprKind::IntImm:
    return mix(h, static_cast<std::uint64_t>(e.as<ir::IntImm>()->value));
  case ir::ExprKind::FloatImm: {
    double v = e.as<ir::FloatImm>()->value;
    std::uint64_t bits = 0;
    static_assert(sizeof(bits) == sizeof(v));
    std::memcpy(&bits, &v, sizeof(v));
    return mix(h, bits);
  }
  case ir::ExprKind::Var:
    return mix(h, hash_str(e.as<ir::Var>()->name));
  case ir::ExprKind::Cast:
    return mix(h, hash(e.as<ir::Cast>()->value));
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    h = mix(h, static_cast<std::uint64_t>(b->op));
    h = mix(h, hash(b->a));
    return mix(h, hash(b->b));
  }
  case ir::ExprKind::Compare: {
    const auto* c = e.as<ir::Compare>();
    h = mix(h, static_cast<std::uint64_t>(c->op));
    h = mix(h, hash(c->a));
    return mix(h, hash(c->b));
  }
  case ir::ExprKind::Logical: {
    const auto* l = e.as<ir::Logical>();
    h = mix(h, static_cast<std::uint64_t>(l->op));
    h = mix(h, hash(l->a));
    return mix(h, hash(l->b));
  }
  case ir::ExprKind::Not:
    return mix(h, hash(e.as<ir::Not>()->a));
  case ir::ExprKind::Select: {
    const auto* s = e.as<ir::Select>();
    h = mix(h, hash(s->cond));
    h = mix(h, hash(s->t));
    return mix(h, hash(s->f));
  }
  case ir::ExprKind::Call: {
    const auto* c = e.as<ir::Call>();
    h = mix(h, static_cast<std::uint64_t>(c->fn));
    for (const ir::Expr& a : c->args)
      h = mix(h, hash(a));
    return h;
  }
  case ir::ExprKind::Load: {
    const auto* l = e.as<ir::Load>();
    load(l);
    return mix(mix(h, hash_str(l->tensor)), l->indices.size());
  }
  case ir::ExprKind::Reduce:
    return mix(h, hash(e.as<ir::Reduce>()->body));
  }
  return h;
}

void Scanner::slot(const std::vector<ir::Expr>& indices) {
  const std::size_t base = consts.size();
  consts.resize(base + indices.size());
  for (std::size_t d = 0; d < indices.size(); ++d) {
    const std::int64_t v = index(indices[d]); // may append nested loads' slots
    consts[base + d] = v;
  }
}

void Scanner::load(const ir::Load* l) {
  loads.push_back(l);
  bases.push_back(consts.size());
  slot(l->indices);
}

/// The value of an index with every variable at 0; loads inside it (a
/// gather) are listed and count as 0.
std::int64_t Scanner::index(const ir::Expr& e) {
  switch (e.kind()) {
  case ir::ExprKind::IntImm:
    return e.as<ir::IntImm>()->value;
  case ir::ExprKind::Var:
    return 0;
  case ir::ExprKind::Cast:
    return index(e.as<ir::Cast>()->value);
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    // Operands in order: each lists the loads it holds.
    const std::int64_t x = index(b->a), y = index(b->b);
    return eval_binary(b->op, x, y);
  }
  case ir::ExprKind::Load:
    load(e.as<ir::Load>());
    return 0;
  default: {
    // Selects and the like are rare in indices: the value the general
    // evaluator gives, and every load on either branch, so that copies
    // list the same loads whichever branch their constants take.
    struct Collector : ir::ExprVisitor {
      Scanner* self;
      using ExprVisitor::visit;
      void visit(const ir::Load* l) override { self->load(l); }
    } c;
    c.self = this;
    c.visit(e);
    return eval_index(e, {});
  }
  }
}

} // namespace kiln::model::detail
