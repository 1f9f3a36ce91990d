#include "kiln/ir/builder.h"

#include <fmt/format.h>

namespace kiln::ir {

Expr Tensor::operator()(std::vector<Expr> indices) const {
  if (indices.size() != shape.size())
    throw UserError(
        Error("wrong-index-count", fmt::format("'{}' has {} dimensions but is read with {} indices",
                                               name, shape.size(), indices.size())));
  return Load::make(name, std::move(indices), dtype);
}

DAGBuilder::DAGBuilder(std::string op_name) : name_(std::move(op_name)) {}

Tensor DAGBuilder::input(std::string name, std::vector<std::int64_t> shape, ScalarType dtype) {
  Stage s;
  s.kind = StageKind::Placeholder;
  s.name = name;
  s.dtype = dtype;
  for (size_t i = 0; i < shape.size(); ++i)
    s.axes.push_back({fmt::format("d{}", i), shape[i]});
  validate_stage(stages_, s);
  stages_.push_back(s);
  return Tensor{std::move(name), std::move(shape), dtype};
}

Tensor DAGBuilder::constant_input(std::string name, std::vector<std::int64_t> shape,
                                  ScalarType dtype) {
  Tensor t = input(std::move(name), std::move(shape), dtype);
  stages_.back().is_constant = true;
  return t;
}

Tensor DAGBuilder::compute(std::string name, std::vector<IterVar> axes,
                           const std::function<Expr(const std::vector<Expr>&)>& body) {
  std::vector<Expr> vars;
  for (const IterVar& a : axes)
    vars.push_back(var(a));
  Stage s;
  s.kind = StageKind::Compute;
  s.name = name;
  s.axes = std::move(axes);
  s.body = body(vars);
  s.dtype = s.body.type();
  validate_stage(stages_, s);
  stages_.push_back(s);
  return Tensor{std::move(name), stages_.back().shape(), s.dtype};
}

void DAGBuilder::output(const Tensor& t) {
  for (Stage& s : stages_)
    if (s.name == t.name) {
      s.is_output = true;
      return;
    }
  throw UserError(Error("unknown-tensor", fmt::format("'{}' is not a stage of this op", t.name)));
}

void DAGBuilder::param(std::string name, std::int64_t value) {
  params_.push_back({std::move(name), value});
}

ComputeDAG DAGBuilder::build() && {
  return ComputeDAG(std::move(name_), std::move(stages_), std::move(params_));
}

} // namespace kiln::ir
