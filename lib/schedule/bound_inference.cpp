#include "bound_inference.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/support/error.h"

#include <algorithm>
#include <limits>

namespace kiln::schedule {

using ir::Expr;

namespace {

/// Collects the index lists of every load of one tensor.
class LoadFinder : public ir::ExprVisitor {
public:
  explicit LoadFinder(std::string tensor) : tensor_(std::move(tensor)) {}
  std::vector<std::vector<Expr>> found;
  using ExprVisitor::visit;
  void visit(const ir::Load* l) override {
    if (l->tensor == tensor_)
      found.push_back(l->indices);
    ExprVisitor::visit(l);
  }

private:
  std::string tensor_;
};

/// Subtracts each attached stage's region base from the indices of its loads.
class RegionRebaser : public ir::ExprMutator {
public:
  explicit RegionRebaser(const std::map<std::string, Region>& regions) : regions_(regions) {}
  using ExprMutator::mutate;

protected:
  Expr mutate(const ir::Load* l, const Expr& self) override {
    Expr e = ExprMutator::mutate(l, self);
    const auto* load = e.as<ir::Load>();
    auto it = regions_.find(load->tensor);
    if (it == regions_.end())
      return e;
    std::vector<Expr> indices;
    for (size_t d = 0; d < load->indices.size(); ++d)
      indices.push_back(is_zero(it->second.base[d]) ? load->indices[d]
                                                    : load->indices[d] - it->second.base[d]);
    return ir::Load::make(load->tensor, std::move(indices), load->type);
  }

private:
  static bool is_zero(const Expr& e) {
    const auto* i = e.as<ir::IntImm>();
    return i && i->value == 0;
  }
  const std::map<std::string, Region>& regions_;
};

} // namespace

Region full_region(const ir::Stage& stage) {
  Region full;
  for (const ir::IterVar& a : stage.axes) {
    full.base.push_back(Expr(0));
    full.extent.push_back(a.extent);
  }
  return full;
}

std::optional<Decomposed> decompose(const Expr& e, const std::set<std::string>& vars) {
  if (!ir::uses_any_var(e, vars))
    return Decomposed{{}, e};
  if (const auto* v = e.as<ir::Var>())
    return Decomposed{ir::LinearForm{{{v->name, 1}}, 0}, Expr(0)};
  if (const auto* c = e.as<ir::Cast>())
    return ir::is_int(c->value.type()) ? decompose(c->value, vars) : std::nullopt;
  const auto* b = e.as<ir::Binary>();
  if (!b)
    return std::nullopt;
  auto x = decompose(b->a, vars), y = decompose(b->b, vars);
  if (!x || !y)
    return std::nullopt;
  switch (b->op) {
  case ir::BinaryOp::Add:
    return Decomposed{ir::added(std::move(x->inner), y->inner, 1), x->rest + y->rest};
  case ir::BinaryOp::Sub:
    return Decomposed{ir::added(std::move(x->inner), y->inner, -1), x->rest - y->rest};
  case ir::BinaryOp::Mul: {
    // Only a constant factor keeps the inner part affine.
    const Decomposed* var_side = x->inner.coeffs.empty() ? &*y : &*x;
    const Decomposed* const_side = var_side == &*x ? &*y : &*x;
    auto k = ir::linearize(const_side->rest);
    if (!const_side->inner.coeffs.empty() || !k || !k->coeffs.empty())
      return std::nullopt;
    return Decomposed{ir::scaled(var_side->inner, k->constant), var_side->rest * Expr(k->constant)};
  }
  case ir::BinaryOp::Div:
  case ir::BinaryOp::Mod:
  case ir::BinaryOp::Min:
  case ir::BinaryOp::Max:
    return std::nullopt;
  }
  return std::nullopt;
}

Reads consumer_reads(const Expr& element, const StageState& consumer, const std::string& prefix,
                     const std::string& at, const std::map<std::string, std::int64_t>& extent) {
  Reads reads{element, {}};
  bool below = false;
  for (const Iterator& it : consumer.iters) {
    if (below)
      reads.inner[prefix + it.name] = extent.at(it.name);
    below |= it.name == at;
  }
  return reads;
}

Reads sibling_reads(const ir::Stage& sibling, const Expr& body, const Region& region) {
  // '#' makes names no op file can use, so they cannot meet the loop
  // variables of the iteration's own stage.
  Reads reads;
  std::vector<std::pair<std::string, Expr>> at_point;
  for (size_t d = 0; d < sibling.axes.size(); ++d) {
    std::string v = sibling.name + "#" + sibling.axes[d].name;
    reads.inner[v] = region.extent[d];
    at_point.emplace_back(sibling.axes[d].name, region.base[d] + ir::Var::make(v));
  }
  Expr value = body;
  if (const auto* r = body.as<ir::Reduce>()) {
    value = r->body;
    for (const ir::IterVar& a : r->axes) {
      std::string v = sibling.name + "#" + a.name;
      reads.inner[v] = a.extent;
      at_point.emplace_back(a.name, ir::Var::make(v));
    }
  }
  reads.element = ir::substitute(value, at_point);
  return reads;
}

/// A fixed part of an index in one canonical form, so that reads of one
/// region written differently (`i.0 * 4` and `4 * i.0 + 0`) compare equal.
static Expr canonical(const Expr& e) {
  auto form = ir::linearize(e);
  return form ? ir::to_expr(*form) : e;
}

Region infer_region(const ir::Stage& producer, const std::vector<Reads>& reads) {
  Region full = full_region(producer);
  std::vector<std::pair<const std::vector<Expr>*, const Reads*>> found;
  std::vector<LoadFinder> finders;
  finders.reserve(reads.size());
  for (const Reads& r : reads) {
    finders.emplace_back(producer.name);
    finders.back().visit(r.element);
    for (const auto& indices : finders.back().found)
      found.emplace_back(&indices, &r);
  }
  if (found.empty())
    return full;
  Region region;
  for (size_t d = 0; d < producer.axes.size(); ++d) {
    std::optional<Expr> rest;
    std::int64_t lo = std::numeric_limits<std::int64_t>::max();
    std::int64_t hi = std::numeric_limits<std::int64_t>::min();
    for (const auto& [indices, r] : found) {
      std::set<std::string> inner;
      for (const auto& [name, extent] : r->inner)
        inner.insert(name);
      auto dec = decompose((*indices)[d], inner);
      if (!dec)
        return full;
      Expr fixed = canonical(dec->rest);
      if (rest && !ir::equal(*rest, fixed))
        return full;
      rest = fixed;
      // Every variable of the inner part varies within the iteration, so it
      // has a range.
      std::optional<ir::Interval> span = ir::bounds_of(dec->inner, r->inner);
      KILN_ASSERT(span, "the inner part of a decomposed index ranges over inner loops");
      lo = std::min(lo, span->min);
      hi = std::max(hi, span->max);
    }
    std::int64_t ext = hi - lo + 1;
    if (ext >= producer.axes[d].extent) {
      // This dimension is read whole; the others may still shrink.
      region.base.push_back(Expr(0));
      region.extent.push_back(producer.axes[d].extent);
      continue;
    }
    Expr base = lo == 0 ? *rest : *rest + Expr(lo);
    auto simple = ir::linearize(base);
    region.base.push_back(simple ? ir::to_expr(*simple) : base);
    region.extent.push_back(ext);
  }
  return region;
}

Expr rebase_loads(const Expr& e, const std::map<std::string, Region>& regions) {
  return RegionRebaser(regions).mutate(e);
}

} // namespace kiln::schedule
