#include "kiln/ir/linear_form.h"

#include <algorithm>

namespace kiln::ir {

std::int64_t LinearForm::coeff(const std::string& var) const {
  auto it = coeffs.find(var);
  return it == coeffs.end() ? 0 : it->second;
}

static LinearForm scaled(LinearForm f, std::int64_t k) {
  if (k == 0)
    return {};
  for (auto& [v, c] : f.coeffs)
    c *= k;
  f.constant *= k;
  return f;
}

static LinearForm added(LinearForm a, const LinearForm& b, std::int64_t sign) {
  for (const auto& [v, c] : b.coeffs) {
    std::int64_t& slot = a.coeffs[v];
    slot += sign * c;
    if (slot == 0)
      a.coeffs.erase(v);
  }
  a.constant += sign * b.constant;
  return a;
}

std::optional<LinearForm> linearize(const Expr& e) {
  if (!is_int(e.type()))
    return std::nullopt;
  if (const auto* i = e.as<IntImm>())
    return LinearForm{{}, i->value};
  if (const auto* v = e.as<Var>())
    return LinearForm{{{v->name, 1}}, 0};
  if (const auto* c = e.as<Cast>())
    return is_int(c->value.type()) ? linearize(c->value) : std::nullopt;
  const auto* b = e.as<Binary>();
  if (!b)
    return std::nullopt;
  auto x = linearize(b->a);
  auto y = linearize(b->b);
  if (!x || !y)
    return std::nullopt;
  switch (b->op) {
  case BinaryOp::Add:
    return added(*x, *y, 1);
  case BinaryOp::Sub:
    return added(*x, *y, -1);
  case BinaryOp::Mul:
    if (x->coeffs.empty())
      return scaled(*y, x->constant);
    if (y->coeffs.empty())
      return scaled(*x, y->constant);
    return std::nullopt;
  case BinaryOp::Div:
  case BinaryOp::Mod:
    if (x->coeffs.empty() && y->coeffs.empty() && y->constant != 0) {
      std::int64_t a = x->constant, d = y->constant;
      std::int64_t q = a / d - ((a % d != 0 && ((a < 0) != (d < 0))) ? 1 : 0);
      return LinearForm{{}, b->op == BinaryOp::Div ? q : a - q * d};
    }
    return std::nullopt;
  case BinaryOp::Min:
  case BinaryOp::Max:
    return std::nullopt;
  }
  return std::nullopt;
}

Expr to_expr(const LinearForm& form) {
  Expr out;
  for (const auto& [v, c] : form.coeffs) {
    Expr term = c == 1 ? Var::make(v) : Var::make(v) * Expr(c);
    out = out.defined() ? out + term : term;
  }
  if (!out.defined())
    return Expr(form.constant);
  if (form.constant == 0)
    return out;
  return form.constant > 0 ? out + Expr(form.constant) : out - Expr(-form.constant);
}

static std::optional<Interval> combine(const Interval& a, const Interval& b, BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return Interval{a.min + b.min, a.max + b.max};
  case BinaryOp::Sub:
    return Interval{a.min - b.max, a.max - b.min};
  case BinaryOp::Mul: {
    std::int64_t c[] = {a.min * b.min, a.min * b.max, a.max * b.min, a.max * b.max};
    return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
  }
  case BinaryOp::Div:
    if (b.min != b.max || b.min <= 0)
      return std::nullopt;
    {
      auto fdiv = [](std::int64_t x, std::int64_t d) {
        return x / d - ((x % d != 0 && x < 0) ? 1 : 0);
      };
      return Interval{fdiv(a.min, b.min), fdiv(a.max, b.min)};
    }
  case BinaryOp::Mod:
    if (b.min != b.max || b.min <= 0)
      return std::nullopt;
    if (a.min >= 0 && a.max < b.min)
      return a;
    return Interval{0, b.min - 1};
  case BinaryOp::Min:
    return Interval{std::min(a.min, b.min), std::min(a.max, b.max)};
  case BinaryOp::Max:
    return Interval{std::max(a.min, b.min), std::max(a.max, b.max)};
  }
  return std::nullopt;
}

std::optional<Interval> bounds_of(const Expr& e,
                                  const std::map<std::string, std::int64_t>& extents) {
  if (!is_int(e.type()))
    return std::nullopt;
  if (const auto* i = e.as<IntImm>())
    return Interval{i->value, i->value};
  if (const auto* v = e.as<Var>()) {
    auto it = extents.find(v->name);
    if (it == extents.end() || it->second <= 0)
      return std::nullopt;
    return Interval{0, it->second - 1};
  }
  if (const auto* c = e.as<Cast>())
    return is_int(c->value.type()) ? bounds_of(c->value, extents) : std::nullopt;
  const auto* b = e.as<Binary>();
  if (!b)
    return std::nullopt;
  // An affine expression is bounded term by term, which is exact (each
  // variable appears once); other shapes use interval arithmetic.
  if (auto f = linearize(e)) {
    Interval r{f->constant, f->constant};
    for (const auto& [v, c] : f->coeffs) {
      auto it = extents.find(v);
      if (it == extents.end() || it->second <= 0)
        return std::nullopt;
      std::int64_t hi = c * (it->second - 1);
      r.min += std::min<std::int64_t>(0, hi);
      r.max += std::max<std::int64_t>(0, hi);
    }
    return r;
  }
  auto x = bounds_of(b->a, extents);
  auto y = bounds_of(b->b, extents);
  if (!x || !y)
    return std::nullopt;
  return combine(*x, *y, b->op);
}

} // namespace kiln::ir
