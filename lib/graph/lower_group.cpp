#include "group_lowering.h"

#include "kiln/support/error.h"

#include <fmt/format.h>

namespace kiln::graph {

std::vector<ir::Expr> reshape_index(const std::vector<std::int64_t>& to,
                                    const std::vector<std::int64_t>& from,
                                    const std::vector<ir::Expr>& index) {
  KILN_ASSERT(index.size() == to.size(), "one index per axis of the reshaped tensor");
  std::vector<ir::Expr> out(from.size(), ir::Expr(0));
  std::size_t i = 0, j = 0;
  auto skip_units = [&] {
    while (i < to.size() && to[i] == 1)
      ++i;
    while (j < from.size() && from[j] == 1)
      ++j;
  };
  for (skip_units(); i < to.size() && j < from.size(); skip_units()) {
    // A run of axes on each side whose sizes multiply to the same number.
    const std::size_t i0 = i, j0 = j;
    std::int64_t pt = to[i++], pf = from[j++];
    while (pt != pf) {
      KILN_ASSERT(i < to.size() || j < from.size(), "a reshape keeps the number of elements");
      if (pt < pf)
        pt *= to[i++];
      else
        pf *= from[j++];
    }
    // The run's position as one number, row-major over its `to` axes.
    ir::Expr linear;
    std::int64_t stride = 1;
    int terms = 0;
    for (std::size_t d = i; d-- > i0;) {
      if (to[d] == 1)
        continue;
      ir::Expr term = stride == 1 ? index[d] : index[d] * ir::Expr(stride);
      linear = terms++ == 0 ? term : term + linear;
      stride *= to[d];
    }
    // Split it over the run's `from` axes.
    stride = 1;
    for (std::size_t d = j; d-- > j0;) {
      if (from[d] == 1)
        continue;
      bool outermost = true;
      for (std::size_t e = j0; e < d; ++e)
        outermost = outermost && from[e] == 1;
      ir::Expr e = stride == 1 ? linear : linear / ir::Expr(stride);
      out[d] = outermost ? e : e % ir::Expr(from[d]);
      stride *= from[d];
    }
  }
  return out;
}

GroupLowering::GroupLowering(const Graph& graph, const Group& group)
    : graph_(graph), group_(group), builder_(op_name()) {
  members_.insert(group.nodes.begin(), group.nodes.end());
}

std::string GroupLowering::fresh(const std::string& base) {
  int& n = names_[base];
  return n++ == 0 ? base : fmt::format("{}{}", base, n - 1);
}

std::vector<ir::IterVar> GroupLowering::axes(const std::vector<std::int64_t>& shape,
                                             const std::string& prefix) {
  std::vector<ir::IterVar> v;
  for (std::size_t d = 0; d < shape.size(); ++d)
    v.push_back({fmt::format("{}{}", prefix, d), shape[d]});
  return v;
}

ir::Tensor GroupLowering::placeholder(int tensor, const std::string& role,
                                      std::vector<std::int64_t> shape) {
  auto it = placeholders_.find(tensor);
  if (it != placeholders_.end())
    return it->second;
  const TensorInfo& t = graph_.tensor(tensor);
  if (shape.empty())
    shape = t.shape.empty() ? std::vector<std::int64_t>{1} : t.shape;
  ir::Tensor p = t.is_constant() ? builder_.constant_input(fresh(role), shape)
                                 : builder_.input(fresh("data"), shape);
  placeholders_.emplace(tensor, p);
  arguments_.push_back(tensor);
  return p;
}

ir::Expr GroupLowering::read(int tensor, const Index& index) {
  auto c = computed_.find(tensor);
  if (c != computed_.end())
    return c->second(index);
  const TensorInfo& t = graph_.tensor(tensor);
  // A one-element constant (a scalar divisor, a clip bound) is a literal.
  if (t.is_constant() && t.num_elements() == 1)
    return ir::Expr(static_cast<double>(t.data->front()));
  const int p = graph_.producer(tensor);
  if (p >= 0 && members_.count(p) && is_view(graph_.nodes[static_cast<std::size_t>(p)].kind)) {
    const int source = graph_.nodes[static_cast<std::size_t>(p)].inputs.front();
    return read(source, reshape_index(t.shape, graph_.tensor(source).shape, index));
  }
  return placeholder(tensor, "weight")(index);
}

ir::Expr GroupLowering::read_broadcast(int tensor, const Index& index) {
  const TensorInfo& t = graph_.tensor(tensor);
  if (t.is_constant() && t.num_elements() == 1)
    return ir::Expr(static_cast<double>(t.data->front()));
  KILN_ASSERT(t.shape.size() <= index.size(), "a broadcast input has at most the output's rank");
  Index at;
  const std::size_t offset = index.size() - t.shape.size();
  for (std::size_t d = 0; d < t.shape.size(); ++d)
    at.push_back(t.shape[d] == 1 ? ir::Expr(0) : index[offset + d]);
  return read(tensor, at);
}

std::string GroupLowering::op_name() const {
  std::string name;
  for (int n : group_.nodes) {
    const Node& node = graph_.nodes[static_cast<std::size_t>(n)];
    if (is_view(node.kind))
      continue;
    std::string part;
    switch (node.kind) {
    case OpKind::Conv: {
      const std::int64_t c = graph_.tensor(node.inputs[0]).shape[1];
      part = node.attrs.group == 1 ? "conv2d"
             : node.attrs.group == c && graph_.tensor(node.output).shape[1] == c
                 ? "depthwise_conv2d"
                 : "group_conv2d";
      break;
    }
    case OpKind::Gemm:
      part = "dense";
      break;
    case OpKind::MatMul:
      part = graph_.tensor(node.inputs[1]).is_constant()   ? "dense"
             : graph_.tensor(node.output).shape.size() > 2 ? "batch_matmul"
                                                           : "matmul";
      break;
    case OpKind::MaxPool:
      part = "max_pool2d";
      break;
    case OpKind::AveragePool:
      part = "avg_pool2d";
      break;
    case OpKind::GlobalAveragePool:
      part = "global_avg_pool";
      break;
    case OpKind::ReduceMean:
      part = "reduce_mean";
      break;
    case OpKind::Softmax:
      part = "softmax";
      break;
    case OpKind::LayerNorm:
      part = "layer_norm";
      break;
    case OpKind::BatchNorm:
      part = "batch_norm";
      break;
    default: {
      std::string_view kind = op_kind_name(node.kind);
      for (char ch : kind)
        part += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    }
    }
    if (!node.folded.empty() && node.folded.front() == "BatchNormalization")
      part += "_bn";
    name += name.empty() ? part : "_" + part;
  }
  return name;
}

GroupKernel GroupLowering::run() && {
  ir::Tensor last;
  for (int n : group_.nodes) {
    const Node& node = graph_.nodes[static_cast<std::size_t>(n)];
    if (is_view(node.kind))
      continue; // read through by the node after it
    last = lower(node);
    computed_[node.output] = last;
  }
  builder_.output(last);
  GroupKernel kernel{std::move(builder_).build(), arguments_};
  kernel.arguments.push_back(group_.output);
  return kernel;
}

GroupKernel lower_group(const Graph& graph, const Group& group) {
  return GroupLowering(graph, group).run();
}

} // namespace kiln::graph
