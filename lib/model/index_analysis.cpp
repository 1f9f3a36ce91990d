#include "index_analysis.h"

namespace kiln::model::detail {

/// Whether comparison `op` holds between x and y.
static bool holds(ir::CompareOp op, std::int64_t x, std::int64_t y) {
  switch (op) {
  case ir::CompareOp::EQ:
    return x == y;
  case ir::CompareOp::NE:
    return x != y;
  case ir::CompareOp::LT:
    return x < y;
  case ir::CompareOp::LE:
    return x <= y;
  case ir::CompareOp::GT:
    return x > y;
  case ir::CompareOp::GE:
    return x >= y;
  }
  return false;
}

std::int64_t eval_index(const ir::Expr& e, std::string_view one) {
  switch (e.kind()) {
  case ir::ExprKind::IntImm:
    return e.as<ir::IntImm>()->value;
  case ir::ExprKind::Var:
    return !one.empty() && e.as<ir::Var>()->name == one ? 1 : 0;
  case ir::ExprKind::Cast:
    return eval_index(e.as<ir::Cast>()->value, one);
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    return eval_binary(b->op, eval_index(b->a, one), eval_index(b->b, one));
  }
  case ir::ExprKind::Select: {
    const auto* s = e.as<ir::Select>();
    const auto* c = s->cond.as<ir::Compare>();
    if (!c)
      return eval_index(s->t, one);
    const bool taken = holds(c->op, eval_index(c->a, one), eval_index(c->b, one));
    return eval_index(taken ? s->t : s->f, one);
  }
  default:
    return 0;
  }
}

std::optional<ir::Interval> interval(const ir::Expr& e, const LoopRanges& ranges) {
  switch (e.kind()) {
  case ir::ExprKind::IntImm: {
    const std::int64_t v = e.as<ir::IntImm>()->value;
    return ir::Interval{v, v};
  }
  case ir::ExprKind::Var:
    for (const auto& [name, extent] : ranges)
      if (name == e.as<ir::Var>()->name)
        return ir::Interval{0, extent - 1};
    return std::nullopt;
  case ir::ExprKind::Cast:
    return interval(e.as<ir::Cast>()->value, ranges);
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    auto x = interval(b->a, ranges);
    auto y = interval(b->b, ranges);
    if (!x || !y)
      return std::nullopt;
    return ir::combine(*x, *y, b->op);
  }
  case ir::ExprKind::Select: {
    const auto* s = e.as<ir::Select>();
    auto x = interval(s->t, ranges);
    auto y = interval(s->f, ranges);
    if (!x || !y)
      return std::nullopt;
    return ir::Interval{std::min(x->min, y->min), std::max(x->max, y->max)};
  }
  default:
    return std::nullopt;
  }
}

} // namespace kiln::model::detail
