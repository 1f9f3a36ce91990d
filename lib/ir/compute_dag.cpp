#include "kiln/ir/compute_dag.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace kiln::ir {

std::vector<std::int64_t> Stage::shape() const {
  std::vector<std::int64_t> s;
  s.reserve(axes.size());
  for (const IterVar& a : axes)
    s.push_back(a.extent);
  return s;
}

std::int64_t Stage::num_elements() const {
  std::int64_t n = 1;
  for (const IterVar& a : axes)
    n *= a.extent;
  return n;
}

const Reduce* Stage::reduction() const {
  return body.defined() ? body.as<Reduce>() : nullptr;
}

[[noreturn]] static void invalid(const Stage& stage, std::string id, std::string message) {
  throw UserError(
      Error(std::move(id), fmt::format("stage '{}': {}", stage.name, message), stage.where));
}

namespace {
/// Checks variables, loads and reductions of one stage body.
class BodyChecker : public ExprVisitor {
public:
  BodyChecker(const std::vector<Stage>& earlier, const Stage& stage)
      : earlier_(earlier), stage_(stage) {
    for (const IterVar& a : stage.axes)
      bound_.push_back(a.name);
  }
  using ExprVisitor::visit;

  void visit(const Var* v) override {
    if (std::find(bound_.begin(), bound_.end(), v->name) != bound_.end())
      return;
    invalid(
        stage_, "unbound-variable",
        fmt::format("'{}' is not an axis of this stage nor of an enclosing reduction", v->name));
  }

  void visit(const Load* l) override {
    auto it = std::find_if(earlier_.begin(), earlier_.end(),
                           [&](const Stage& s) { return s.name == l->tensor; });
    if (it == earlier_.end())
      invalid(stage_, "unknown-tensor",
              fmt::format("reads '{}', which is not a stage defined before it", l->tensor));
    if (it->axes.size() != l->indices.size())
      invalid(stage_, "wrong-index-count",
              fmt::format("'{}' has {} dimensions but is read with {} indices", l->tensor,
                          it->axes.size(), l->indices.size()));
    if (it->dtype != l->type)
      invalid(stage_, "type-error",
              fmt::format("reads '{}' as {} but it holds {}", l->tensor, type_name(l->type),
                          type_name(it->dtype)));
    ExprVisitor::visit(l);
  }

  void visit(const Reduce* r) override {
    if (!top_level_)
      invalid(stage_, "reduction-not-top-level",
              "a reduction must be the whole right-hand side of a stage; compute it in its own "
              "stage");
    top_level_ = false;
    size_t before = bound_.size();
    for (const IterVar& a : r->axes) {
      if (a.extent <= 0)
        invalid(stage_, "nonpositive-extent",
                fmt::format("reduction axis '{}' has extent {}; extents must be positive", a.name,
                            a.extent));
      if (std::find(bound_.begin(), bound_.end(), a.name) != bound_.end())
        invalid(stage_, "duplicate-axis",
                fmt::format("reduction axis '{}' has the name of another axis", a.name));
      bound_.push_back(a.name);
    }
    visit(r->body);
    bound_.resize(before);
  }

  void check(const Expr& body) {
    top_level_ = true;
    if (body.kind() != ExprKind::Reduce)
      top_level_ = false;
    visit(body);
  }

private:
  const std::vector<Stage>& earlier_;
  const Stage& stage_;
  std::vector<std::string> bound_;
  bool top_level_ = false;
};
} // namespace

void validate_stage(const std::vector<Stage>& earlier, const Stage& stage) {
  if (stage.name.empty())
    throw UserError(Error("syntax-error", "a stage needs a name"));
  for (const Stage& s : earlier)
    if (s.name == stage.name)
      invalid(stage, "duplicate-name", "the name is already used by an earlier stage");
  std::set<std::string> axis_names;
  for (const IterVar& a : stage.axes) {
    if (a.extent <= 0)
      invalid(stage, "nonpositive-extent",
              fmt::format("axis '{}' has extent {}; extents must be positive", a.name, a.extent));
    if (!axis_names.insert(a.name).second)
      invalid(stage, "duplicate-axis", fmt::format("axis '{}' appears twice", a.name));
  }
  if (stage.is_placeholder()) {
    if (stage.body.defined())
      invalid(stage, "syntax-error", "an input has no body");
    return;
  }
  if (!stage.body.defined())
    invalid(stage, "syntax-error", "a compute stage needs a body");
  if (stage.body.type() != stage.dtype)
    invalid(stage, "type-error",
            fmt::format("declared {} but its body is {}", type_name(stage.dtype),
                        type_name(stage.body.type())));
  BodyChecker(earlier, stage).check(stage.body);
}

ComputeDAG::ComputeDAG(std::string name, std::vector<Stage> stages, std::vector<Param> params)
    : name_(std::move(name)), stages_(std::move(stages)), params_(std::move(params)) {
  std::vector<Stage> earlier;
  earlier.reserve(stages_.size());
  bool has_output = false;
  for (const Stage& s : stages_) {
    validate_stage(earlier, s);
    if (s.is_output && s.is_placeholder())
      invalid(s, "syntax-error", "an input cannot be an output");
    has_output |= s.is_output;
    earlier.push_back(s);
  }
  if (!has_output)
    throw UserError(Error("no-output", fmt::format("op '{}' has no output stage; declare the final "
                                                   "stage with 'output' instead of 'stage'",
                                                   name_)));
}

int ComputeDAG::find_stage(std::string_view name) const {
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::vector<int> ComputeDAG::arguments() const {
  std::vector<int> args;
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].is_placeholder())
      args.push_back(static_cast<int>(i));
  for (size_t i = 0; i < stages_.size(); ++i)
    if (stages_[i].is_output)
      args.push_back(static_cast<int>(i));
  return args;
}

std::vector<int> ComputeDAG::intermediates() const {
  std::vector<int> out;
  for (size_t i = 0; i < stages_.size(); ++i)
    if (!stages_[i].is_placeholder() && !stages_[i].is_output)
      out.push_back(static_cast<int>(i));
  return out;
}

namespace {
class LoadCollector : public ExprVisitor {
public:
  std::set<std::string> names;
  using ExprVisitor::visit;
  void visit(const Load* l) override {
    names.insert(l->tensor);
    ExprVisitor::visit(l);
  }
};
} // namespace

std::vector<int> ComputeDAG::producers(int index) const {
  const Stage& s = stages_.at(index);
  if (!s.body.defined())
    return {};
  LoadCollector c;
  c.visit(s.body);
  std::vector<int> out;
  for (const std::string& n : c.names)
    out.push_back(find_stage(n));
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> ComputeDAG::consumers(int index) const {
  std::vector<int> out;
  for (size_t i = 0; i < stages_.size(); ++i) {
    std::vector<int> p = producers(static_cast<int>(i));
    if (std::find(p.begin(), p.end(), index) != p.end())
      out.push_back(static_cast<int>(i));
  }
  return out;
}

namespace {
/// Floating-point operations in one evaluation of an expression.
class FlopCounter : public ExprVisitor {
public:
  double flops = 0;
  using ExprVisitor::visit;
  void visit(const Binary* b) override {
    flops += is_float(b->type) ? 1 : 0;
    ExprVisitor::visit(b);
  }
  void visit(const Compare* c) override {
    flops += is_float(c->a.type()) ? 1 : 0;
    ExprVisitor::visit(c);
  }
  void visit(const Call* c) override {
    flops += 1;
    ExprVisitor::visit(c);
  }
};
} // namespace

namespace {
class StageInliner : public ExprMutator {
public:
  explicit StageInliner(const std::map<std::string, const Stage*>& stages) : stages_(stages) {}
  using ExprMutator::mutate;

protected:
  Expr mutate(const Load* l, const Expr& self) override {
    Expr e = ExprMutator::mutate(l, self);
    const auto* load = e.as<Load>();
    auto it = stages_.find(load->tensor);
    if (it == stages_.end())
      return e;
    const Stage& s = *it->second;
    std::vector<std::pair<std::string, Expr>> args;
    for (size_t d = 0; d < s.axes.size(); ++d)
      args.emplace_back(s.axes[d].name, load->indices[d]);
    return substitute(s.body, args);
  }

private:
  const std::map<std::string, const Stage*>& stages_;
};
} // namespace

Expr inline_stages(const Expr& e, const std::map<std::string, const Stage*>& stages) {
  if (stages.empty() || !e.defined())
    return e;
  StageInliner inliner(stages);
  return inliner.mutate(e);
}

double ComputeDAG::flop_count() const {
  double total = 0;
  for (const Stage& s : stages_) {
    if (s.is_placeholder())
      continue;
    double points = static_cast<double>(s.num_elements());
    const Reduce* r = s.reduction();
    FlopCounter c;
    c.visit(r ? r->body : s.body);
    double per_point = c.flops;
    if (r) {
      double steps = 1;
      for (const IterVar& a : r->axes)
        steps *= static_cast<double>(a.extent);
      per_point = (c.flops + 1) * steps; // +1: the combine of each reduction step
    }
    total += points * per_point;
  }
  return total;
}

std::string ComputeDAG::to_string() const {
  return ir::to_string(*this);
}

std::string ComputeDAG::workload_key() const {
  // FNV-1a, 64 bit: stable across machines and standard libraries.
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : to_string()) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{}-{:016x}", name_, h);
}

} // namespace kiln::ir
