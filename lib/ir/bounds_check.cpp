#include "bounds_check.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace kiln::ir {

namespace {

/// A closed range of an axis; empty when lo > hi (a guard no point meets).
struct Range {
  __int128 lo = 0, hi = 0;
};

using Ranges = std::map<std::string, Range>;

/// One comparison `var CMP constant` (either side), as a range on `var`.
struct Bound {
  std::string var;
  __int128 lo, hi;
};

std::optional<Bound> single_var_bound(const Expr& e, bool negate) {
  const auto* c = e.as<Compare>();
  if (!c)
    return std::nullopt;
  const Var* v = c->a.as<Var>();
  const IntImm* k = c->b.as<IntImm>();
  CompareOp op = c->op;
  if (!v || !k) {
    // constant CMP var: flip it to var CMP' constant.
    v = c->b.as<Var>();
    k = c->a.as<IntImm>();
    if (!v || !k)
      return std::nullopt;
    switch (op) {
    case CompareOp::LT:
      op = CompareOp::GT;
      break;
    case CompareOp::LE:
      op = CompareOp::GE;
      break;
    case CompareOp::GT:
      op = CompareOp::LT;
      break;
    case CompareOp::GE:
      op = CompareOp::LE;
      break;
    default:
      break;
    }
  }
  if (negate) {
    switch (op) {
    case CompareOp::LT:
      op = CompareOp::GE;
      break;
    case CompareOp::LE:
      op = CompareOp::GT;
      break;
    case CompareOp::GT:
      op = CompareOp::LE;
      break;
    case CompareOp::GE:
      op = CompareOp::LT;
      break;
    case CompareOp::EQ:
      op = CompareOp::NE;
      break;
    case CompareOp::NE:
      op = CompareOp::EQ;
      break;
    }
  }
  constexpr __int128 kWide = static_cast<__int128>(1) << 100;
  const __int128 n = k->value;
  switch (op) {
  case CompareOp::LT:
    return Bound{v->name, -kWide, n - 1};
  case CompareOp::LE:
    return Bound{v->name, -kWide, n};
  case CompareOp::GT:
    return Bound{v->name, n + 1, kWide};
  case CompareOp::GE:
    return Bound{v->name, n, kWide};
  case CompareOp::EQ:
    return Bound{v->name, n, n};
  case CompareOp::NE:
    return std::nullopt; // a range with a hole
  }
  return std::nullopt;
}

/// The bounds a condition puts on single axes: all of them when it holds
/// (`negate` false) and it is a conjunction of such comparisons, or when it
/// fails (`negate` true) and it is one comparison. `exact` is false when
/// the condition says more than the bounds do.
std::vector<Bound> bounds_of(const Expr& cond, bool negate, bool& exact) {
  std::vector<Bound> out;
  if (const auto* l = cond.as<Logical>(); l && l->op == LogicalOp::And && !negate) {
    for (const Expr* side : {&l->a, &l->b})
      for (Bound& b : bounds_of(*side, false, exact))
        out.push_back(std::move(b));
    return out;
  }
  if (auto b = single_var_bound(cond, negate))
    out.push_back(*b);
  else
    exact = false;
  return out;
}

class BoundsChecker : public ExprVisitor {
public:
  BoundsChecker(const std::vector<Stage>& earlier, const Stage& stage)
      : earlier_(earlier), stage_(stage) {
    for (const IterVar& a : stage.axes)
      ranges_[a.name] = Range{0, static_cast<__int128>(a.extent) - 1};
  }
  using ExprVisitor::visit;

  void visit(const Reduce* r) override {
    for (const IterVar& a : r->axes)
      ranges_[a.name] = Range{0, static_cast<__int128>(a.extent) - 1};
    visit(r->body);
  }

  void visit(const Select* s) override {
    visit(s->cond);
    visit_guarded(s->t, s->cond, false);
    visit_guarded(s->f, s->cond, true);
  }

  void visit(const Load* l) override {
    ExprVisitor::visit(l);
    auto tensor = std::find_if(earlier_.begin(), earlier_.end(),
                               [&](const Stage& s) { return s.name == l->tensor; });
    if (tensor == earlier_.end() || tensor->axes.size() != l->indices.size())
      return; // reported by the DAG's own checks
    for (std::size_t d = 0; d < l->indices.size(); ++d)
      check_index(*tensor, l, d);
  }

private:
  void visit_guarded(const Expr& branch, const Expr& cond, bool negate) {
    Ranges saved = ranges_;
    bool saved_exact = exact_;
    for (const Bound& b : bounds_of(cond, negate, exact_)) {
      auto it = ranges_.find(b.var);
      if (it == ranges_.end()) {
        exact_ = false;
        continue;
      }
      it->second.lo = std::max(it->second.lo, b.lo);
      it->second.hi = std::min(it->second.hi, b.hi);
    }
    if (!empty_domain())
      visit(branch);
    ranges_ = std::move(saved);
    exact_ = saved_exact;
  }

  bool empty_domain() const {
    return std::any_of(ranges_.begin(), ranges_.end(),
                       [](const auto& r) { return r.second.lo > r.second.hi; });
  }

  void check_index(const Stage& tensor, const Load* l, std::size_t d) {
    const Expr& index = l->indices[d];
    std::optional<LinearForm> form = linearize(index);
    if (!form)
      return; // not affine: left to the interpreter
    __int128 lo = form->constant, hi = form->constant;
    for (const auto& [var, coeff] : form->coeffs) {
      auto it = ranges_.find(var);
      if (it == ranges_.end())
        return; // not an axis in scope: reported by the DAG's own checks
      __int128 a = coeff * it->second.lo, b = coeff * it->second.hi;
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
    const std::int64_t extent = tensor.axes[d].extent;
    if ((lo >= 0 && hi < extent) || !exact_)
      return;
    throw UserError(Error(
        "index-out-of-bounds",
        fmt::format("stage '{}' reads {}[{}] out of bounds: index {} ('{}') ranges over {}..{} "
                    "but dimension {} of '{}' has extent {} (0..{}); change the index, or guard "
                    "the read with select(...) on the axes",
                    stage_.name, l->tensor, join_indices(l), d, to_string(index),
                    static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi), d, l->tensor,
                    extent, extent - 1),
        stage_.where));
  }

  static std::string join_indices(const Load* l) {
    std::string out;
    for (std::size_t i = 0; i < l->indices.size(); ++i)
      out += (i ? ", " : "") + to_string(l->indices[i]);
    return out;
  }

  const std::vector<Stage>& earlier_;
  const Stage& stage_;
  Ranges ranges_;
  bool exact_ = true;
};

} // namespace

void check_access_bounds(const std::vector<Stage>& earlier, const Stage& stage) {
  if (stage.body.defined())
    BoundsChecker(earlier, stage).visit(stage.body);
}

} // namespace kiln::ir
