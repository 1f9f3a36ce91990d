// The importer's helpers for the node being converted: its attributes,
// inputs and output, and the errors that name it.
#include "onnx_importer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kiln::graph {

std::int64_t checked_elements(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d <= 0 || n > kMaxTensorElements / d)
      return -1;
    n *= d;
  }
  return n;
}

static std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string Importer::describe(const onnx::NodeProto& node) const {
  return fmt::format("node '{}' ({})",
                     node.name().empty() ? fmt::format("#{}", node_index_) : node.name(),
                     node.op_type());
}

void Importer::fail(const std::string& id, const std::string& message) const {
  KILN_ASSERT(node_ != nullptr, "fail() is for the node being converted");
  throw UserError(Error(id, fmt::format("{}: {}: {}", source_, describe(*node_), message)));
}

void Importer::allow_attributes(const onnx::NodeProto& node, std::set<std::string> names) const {
  for (const onnx::AttributeProto& a : node.attribute())
    if (!names.count(a.name()))
      fail("onnx-unsupported",
           fmt::format("attribute '{}' is not supported; {} takes {}", a.name(), node.op_type(),
                       names.empty() ? std::string("no attributes")
                                     : fmt::format("{}", fmt::join(names, ", "))));
}

void Importer::expect_inputs(const onnx::NodeProto& node, std::size_t min, std::size_t max) const {
  auto n = static_cast<std::size_t>(node.input_size());
  if (n < min || n > max)
    fail("onnx-bad-model",
         fmt::format("has {} inputs; {} takes {}", n, node.op_type(),
                     min == max ? std::to_string(min) : fmt::format("{} to {}", min, max)));
}

void Importer::expect_one_output(const onnx::NodeProto& node) const {
  if (node.output_size() < 1 || node.output(0).empty())
    fail("onnx-bad-model", "has no output");
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      fail("onnx-unsupported",
           fmt::format("output {} ('{}') is a training output kiln does not compute; only the "
                       "first output may be used",
                       i, node.output(i)));
}

const onnx::AttributeProto* Importer::attribute(const onnx::NodeProto& node,
                                                const std::string& name) const {
  for (const onnx::AttributeProto& a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::int64_t Importer::int_attr(const onnx::NodeProto& node, const std::string& name,
                                std::int64_t fallback) const {
  const onnx::AttributeProto* a = attribute(node, name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto_AttributeType_INT)
    fail("onnx-bad-model", fmt::format("attribute '{}' must be an integer", name));
  return a->i();
}

float Importer::float_attr(const onnx::NodeProto& node, const std::string& name,
                           float fallback) const {
  const onnx::AttributeProto* a = attribute(node, name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto_AttributeType_FLOAT)
    fail("onnx-bad-model", fmt::format("attribute '{}' must be a float", name));
  return a->f();
}

std::string Importer::string_attr(const onnx::NodeProto& node, const std::string& name,
                                  const std::string& fallback) const {
  const onnx::AttributeProto* a = attribute(node, name);
  if (!a)
    return fallback;
  if (a->type() != onnx::AttributeProto_AttributeType_STRING)
    fail("onnx-bad-model", fmt::format("attribute '{}' must be a string", name));
  return a->s();
}

std::vector<std::int64_t> Importer::ints_attr(const onnx::NodeProto& node,
                                              const std::string& name) const {
  const onnx::AttributeProto* a = attribute(node, name);
  if (!a)
    return {};
  if (a->type() != onnx::AttributeProto_AttributeType_INTS)
    fail("onnx-bad-model", fmt::format("attribute '{}' must be a list of integers", name));
  return {a->ints().begin(), a->ints().end()};
}

bool Importer::has_input(const onnx::NodeProto& node, int i) const {
  return i < node.input_size() && !node.input(i).empty();
}

int Importer::input(const onnx::NodeProto& node, int i) const {
  if (!has_input(node, i))
    fail("onnx-bad-model", fmt::format("input {} is missing", i));
  auto it = tensors_.find(node.input(i));
  if (it == tensors_.end()) {
    if (int64_constants_.count(node.input(i)))
      fail("onnx-unsupported",
           fmt::format("input '{}' is an int64 tensor; kiln computes in f32 and reads int64 "
                       "tensors only as shapes and axes",
                       node.input(i)));
    fail("onnx-bad-model",
         fmt::format("input '{}' is defined by no earlier node, graph input or initializer "
                     "(nodes must be in topological order)",
                     node.input(i)));
  }
  return it->second;
}

int Importer::constant_input(const onnx::NodeProto& node, int i, const std::string& what) const {
  int id = input(node, i);
  if (!graph_.tensor(id).is_constant())
    fail("onnx-unsupported",
         fmt::format("its {} ('{}') is computed by the graph; kiln needs it to be an "
                     "initializer (a constant)",
                     what, node.input(i)));
  return id;
}

std::vector<std::int64_t> Importer::int64_input(const onnx::NodeProto& node, int i,
                                                const std::string& what) const {
  if (!has_input(node, i))
    fail("onnx-bad-model", fmt::format("its {} (input {}) is missing", what, i));
  auto it = int64_constants_.find(node.input(i));
  if (it == int64_constants_.end())
    fail("onnx-unsupported",
         fmt::format("its {} ('{}') must be an int64 initializer or Constant; kiln compiles for "
                     "static shapes",
                     what, node.input(i)));
  return it->second;
}

std::int64_t Importer::normalize_axis(std::int64_t axis, std::size_t rank,
                                      const std::string& what) const {
  auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r)
    fail("onnx-bad-model",
         fmt::format("{} {} is out of range for a tensor of rank {}", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

void Importer::emit(const onnx::NodeProto& node, OpKind kind, std::vector<int> inputs,
                    std::vector<std::int64_t> shape, NodeAttributes attrs) {
  expect_one_output(node);
  if (checked_elements(shape) < 0)
    fail("onnx-bad-model", fmt::format("its output would have shape {}, which is empty or has "
                                       "more than 2^42 elements",
                                       shape_text(shape)));
  int out = graph_.add_tensor(TensorInfo{node.output(0), std::move(shape), nullptr});
  tensors_[node.output(0)] = out;
  Node n;
  n.name = node.name().empty() ? fmt::format("{}_{}", node.op_type(), node_index_) : node.name();
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.output = out;
  n.attrs = std::move(attrs);
  graph_.nodes.push_back(std::move(n));
}

std::vector<std::int64_t> Importer::broadcast(const std::vector<std::int64_t>& a,
                                              const std::vector<std::int64_t>& b) const {
  std::vector<std::int64_t> out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    std::int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1)
      fail("onnx-bad-model",
           fmt::format("shapes {} and {} do not broadcast", shape_text(a), shape_text(b)));
    out[out.size() - 1 - i] = std::max(x, y);
  }
  return out;
}

} // namespace kiln::graph
