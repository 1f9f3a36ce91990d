#include "template_util.h"

#include "kiln/ir/expr_visitor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::space::detail {

Error mismatch(std::string_view name, const ir::ComputeDAG& dag, const std::string& why) {
  return Error("template-mismatch",
               fmt::format("template '{}' does not fit op '{}': {}", name, dag.name(), why));
}

std::vector<int> compute_stages(const ir::ComputeDAG& dag) {
  std::vector<int> out;
  for (std::size_t i = 0; i < dag.stages().size(); ++i)
    if (!dag.stages()[i].is_placeholder())
      out.push_back(static_cast<int>(i));
  return out;
}

std::string stage_names(const ir::ComputeDAG& dag, const std::vector<int>& stages) {
  std::vector<std::string> names;
  for (int s : stages)
    names.push_back(dag.stage(s).name);
  return fmt::format("{}", fmt::join(names, ", "));
}

namespace {
/// Every load of one tensor in an expression.
class LoadsOf : public ir::ExprVisitor {
public:
  explicit LoadsOf(const std::string& tensor) : tensor_(tensor) {}
  std::vector<const ir::Load*> loads;
  using ExprVisitor::visit;
  void visit(const ir::Load* l) override {
    if (l->tensor == tensor_)
      loads.push_back(l);
    ExprVisitor::visit(l);
  }

private:
  const std::string& tensor_;
};
} // namespace

bool reads_exactly(const ir::Expr& body, const std::string& tensor,
                   const std::vector<std::string>& vars) {
  LoadsOf l(tensor);
  l.visit(body);
  for (const ir::Load* load : l.loads) {
    if (load->indices.size() != vars.size())
      return false;
    for (std::size_t d = 0; d < vars.size(); ++d) {
      const auto* v = load->indices[d].as<ir::Var>();
      if (!v || v->name != vars[d])
        return false;
    }
  }
  return !l.loads.empty();
}

bool reads_elementwise(const ir::Stage& consumer, const ir::Stage& producer) {
  if (consumer.is_placeholder() || consumer.reduction() ||
      consumer.axes.size() != producer.axes.size())
    return false;
  std::vector<std::string> axes;
  for (std::size_t d = 0; d < producer.axes.size(); ++d) {
    if (consumer.axes[d].extent != producer.axes[d].extent)
      return false;
    axes.push_back(consumer.axes[d].name);
  }
  return reads_exactly(consumer.body, producer.name, axes);
}

std::vector<std::string> Schedule::split(const std::string& stage, const std::string& iter,
                                         const std::vector<std::int64_t>& lengths) {
  std::vector<std::string> loops;
  for (std::size_t i = 0; i < lengths.size(); ++i)
    loops.push_back(fmt::format("{}.{}", iter, i));
  out_.push_back(schedule::SplitStep{
      stage, iter, std::vector<std::int64_t>(lengths.begin() + 1, lengths.end())});
  return loops;
}

void Schedule::reorder(const std::string& stage, std::vector<std::string> order) {
  out_.push_back(schedule::ReorderStep{stage, std::move(order)});
}

std::string Schedule::fuse(const std::string& stage, const std::vector<std::string>& iters) {
  if (iters.size() == 1)
    return iters[0];
  out_.push_back(schedule::FuseStep{stage, iters});
  return fmt::format("{}", fmt::join(iters, "@"));
}

void Schedule::compute_at(const std::string& stage, const std::string& target,
                          const std::string& iter) {
  out_.push_back(schedule::ComputeAtStep{stage, target, iter});
}

void Schedule::compute_inline(const std::string& stage) {
  out_.push_back(schedule::ComputeInlineStep{stage});
}

std::string Schedule::cache_write(const std::string& stage) {
  out_.push_back(schedule::CacheWriteStep{stage});
  return stage + ".local";
}

void Schedule::parallel(const std::string& stage, const std::string& iter) {
  out_.push_back(schedule::AnnotateStep{stage, iter, schedule::Annotation::Parallel});
}

void Schedule::vectorize(const std::string& stage, const std::string& iter) {
  out_.push_back(schedule::AnnotateStep{stage, iter, schedule::Annotation::Vectorize});
}

void Schedule::unroll(const std::string& stage, const std::string& iter) {
  out_.push_back(schedule::AnnotateStep{stage, iter, schedule::Annotation::Unroll});
}

} // namespace kiln::space::detail
