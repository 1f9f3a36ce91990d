#include "kiln/ir/compute_dag.h"

#include "bounds_check.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/limits.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
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
    if (r->axes.size() > static_cast<std::size_t>(kMaxDimensions))
      invalid(stage_, "limit-exceeded",
              fmt::format("a reduction over {} axes; a reduction has at most {}", r->axes.size(),
                          kMaxDimensions));
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

/// The number of elements of `shape` and their bytes, or nullopt when either
/// does not fit in 63 bits.
static std::optional<std::int64_t> checked_bytes(const std::vector<std::int64_t>& shape,
                                                 std::int64_t element_bytes) {
  std::int64_t n = element_bytes;
  for (std::int64_t extent : shape)
    if (__builtin_mul_overflow(n, extent, &n))
      return std::nullopt;
  return n;
}

static std::string shape_product(const std::vector<std::int64_t>& shape) {
  std::vector<std::string> parts;
  for (std::int64_t e : shape)
    parts.push_back(std::to_string(e));
  return fmt::format("{}", fmt::join(parts, " x "));
}

/// Every size of a stage, and every loop over its iteration space (its
/// elements times its reduction), must fit in a signed 64-bit index.
static void check_size(const Stage& stage) {
  std::vector<std::int64_t> shape = stage.shape();
  if (!checked_bytes(shape, bytes(stage.dtype)))
    invalid(stage, "too-large",
            fmt::format("its {} elements of {} take more than 2^63 bytes; make the extents "
                        "smaller (e.g. with --set)",
                        shape_product(shape), type_name(stage.dtype)));
  if (const Reduce* r = stage.reduction()) {
    for (const IterVar& a : r->axes)
      shape.push_back(a.extent);
    if (!checked_bytes(shape, 1))
      invalid(stage, "too-large",
              fmt::format("its iteration space {} (axes, then reduction axes) has more than "
                          "2^63 points; make the extents smaller (e.g. with --set)",
                          shape_product(shape)));
  }
}

void validate_stage(const std::vector<Stage>& earlier, const Stage& stage) {
  if (stage.name.empty())
    throw UserError(Error("syntax-error", "a stage needs a name"));
  for (const Stage& s : earlier)
    if (s.name == stage.name)
      invalid(stage, "duplicate-name", "the name is already used by an earlier stage");
  if (stage.axes.size() > static_cast<std::size_t>(kMaxDimensions))
    invalid(
        stage, "limit-exceeded",
        fmt::format("{} dimensions; a tensor has at most {}", stage.axes.size(), kMaxDimensions));
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
    check_size(stage);
    return;
  }
  if (!stage.body.defined())
    invalid(stage, "syntax-error", "a compute stage needs a body");
  if (stage.body.depth() > kMaxExprDepth)
    invalid(stage, "limit-exceeded",
            fmt::format("the body nests {} levels deep; an expression nests at most {} (compute "
                        "parts of it in stages of their own)",
                        stage.body.depth(), kMaxExprDepth));
  if (stage.body.type() != stage.dtype)
    invalid(stage, "type-error",
            fmt::format("declared {} but its body is {}", type_name(stage.dtype),
                        type_name(stage.body.type())));
  BodyChecker(earlier, stage).check(stage.body);
  check_size(stage);
  check_access_bounds(earlier, stage);
}

ComputeDAG::ComputeDAG(std::string name, std::vector<Stage> stages, std::vector<Param> params)
    : name_(std::move(name)), stages_(std::move(stages)), params_(std::move(params)) {
  if (stages_.size() > static_cast<std::size_t>(kMaxStages))
    throw UserError(
        Error("limit-exceeded", fmt::format("op '{}' has {} stages; an op has at most {}", name_,
                                            stages_.size(), kMaxStages)));
  std::vector<Stage> earlier;
  earlier.reserve(stages_.size());
  bool has_output = false;
  for (const Stage& s : stages_) {
    validate_stage(earlier, s);
    if (s.is_output && s.is_placeholder())
      invalid(s, "syntax-error", "an input cannot be an output");
    if (s.is_constant && !s.is_placeholder())
      invalid(s, "syntax-error", "only an input can be constant");
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

bool ComputeDAG::is_constant(int index) const {
  return constant_stages().at(static_cast<size_t>(index));
}

std::vector<bool> ComputeDAG::constant_stages() const {
  // In stage order, so that a DAG with many shared producers is walked once.
  std::vector<bool> constant(stages_.size());
  for (int i = 0; i < static_cast<int>(stages_.size()); ++i) {
    const Stage& s = stages_.at(i);
    std::vector<int> read = s.is_placeholder() ? std::vector<int>{} : producers(i);
    constant[i] = s.is_placeholder()
                      ? s.is_constant
                      : !read.empty() && std::all_of(read.begin(), read.end(),
                                                     [&](int p) { return constant[p]; });
  }
  return constant;
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
