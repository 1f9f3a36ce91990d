#include "kiln/graph/graph.h"

#include "kiln/support/error.h"

namespace kiln::graph {

std::int64_t TensorInfo::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape)
    n *= d;
  return n;
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
  case OpKind::Conv:
    return "Conv";
  case OpKind::Gemm:
    return "Gemm";
  case OpKind::MatMul:
    return "MatMul";
  case OpKind::MaxPool:
    return "MaxPool";
  case OpKind::AveragePool:
    return "AveragePool";
  case OpKind::GlobalAveragePool:
    return "GlobalAveragePool";
  case OpKind::ReduceMean:
    return "ReduceMean";
  case OpKind::Softmax:
    return "Softmax";
  case OpKind::LayerNorm:
    return "LayerNormalization";
  case OpKind::Concat:
    return "Concat";
  case OpKind::Add:
    return "Add";
  case OpKind::Sub:
    return "Sub";
  case OpKind::Mul:
    return "Mul";
  case OpKind::Div:
    return "Div";
  case OpKind::Relu:
    return "Relu";
  case OpKind::Clip:
    return "Clip";
  case OpKind::Sigmoid:
    return "Sigmoid";
  case OpKind::Erf:
    return "Erf";
  case OpKind::Sqrt:
    return "Sqrt";
  case OpKind::Pow:
    return "Pow";
  case OpKind::BatchNorm:
    return "BatchNormalization";
  case OpKind::Transpose:
    return "Transpose";
  case OpKind::Reshape:
    return "Reshape";
  }
  kiln_unreachable("unknown op kind");
}

bool is_anchor(OpKind kind) {
  return kind <= OpKind::Concat;
}

bool is_view(OpKind kind) {
  return kind == OpKind::Reshape;
}

int Graph::add_tensor(TensorInfo t) {
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

int Graph::add_constant(std::string tensor_name, std::vector<std::int64_t> shape,
                        std::vector<float> data) {
  TensorInfo t{std::move(tensor_name), std::move(shape), nullptr};
  KILN_ASSERT(t.num_elements() == static_cast<std::int64_t>(data.size()),
              "a constant's data must fill its shape");
  t.data = std::make_shared<const std::vector<float>>(std::move(data));
  return add_tensor(std::move(t));
}

int Graph::producer(int tensor_id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].output == tensor_id)
      return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::consumers(int tensor_id) const {
  std::vector<int> out;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (int in : nodes[i].inputs)
      if (in == tensor_id) {
        out.push_back(static_cast<int>(i));
        break;
      }
  return out;
}

bool Graph::is_graph_output(int tensor_id) const {
  for (int o : outputs)
    if (o == tensor_id)
      return true;
  return false;
}

int Graph::view_base(int tensor_id) const {
  for (int p = producer(tensor_id); p >= 0 && is_view(nodes[static_cast<std::size_t>(p)].kind);
       p = producer(tensor_id))
    tensor_id = nodes[static_cast<std::size_t>(p)].inputs.front();
  return tensor_id;
}

std::int64_t Graph::parameter_count() const {
  // Constants the nodes read: folding leaves the replaced ones unread.
  std::vector<bool> read(tensors.size(), false);
  for (const Node& node : nodes)
    for (int t : node.inputs)
      read[static_cast<std::size_t>(t)] = true;
  std::int64_t n = 0;
  for (std::size_t t = 0; t < tensors.size(); ++t)
    if (read[t] && tensors[t].is_constant())
      n += tensors[t].num_elements();
  return n;
}

} // namespace kiln::graph
