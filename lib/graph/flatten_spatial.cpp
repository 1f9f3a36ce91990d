#include "fold.h"

#include <map>

namespace kiln::graph {

namespace {

/// A 1×1 conv of stride 1, no padding, no groups, on a map of more than
/// one row and column: a matrix product over the map's positions.
bool is_pointwise_conv(const Graph& graph, const Node& node) {
  if (node.kind != OpKind::Conv || node.attrs.group != 1)
    return false;
  const auto& x = graph.tensor(node.inputs[0]).shape;
  const auto& w = graph.tensor(node.inputs[1]).shape;
  if (x.size() != 4 || w.size() != 4 || w[2] != 1 || w[3] != 1 || x[2] < 2 || x[3] < 2)
    return false;
  for (std::int64_t s : node.attrs.strides)
    if (s != 1)
      return false;
  for (std::int64_t p : node.attrs.pads)
    if (p != 0)
      return false;
  return true;
}

/// Elementwise kinds that read every operand broadcast by numpy's rules,
/// whatever the axes mean.
bool is_shape_blind(OpKind kind) {
  switch (kind) {
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Relu:
  case OpKind::Clip:
  case OpKind::Sigmoid:
  case OpKind::Erf:
  case OpKind::Sqrt:
  case OpKind::Pow:
    return true;
  default:
    return false;
  }
}

/// [N, C, H, W] as [N, C, 1, H·W].
std::vector<std::int64_t> flat(const std::vector<std::int64_t>& shape) {
  return {shape[0], shape[1], 1, shape[2] * shape[3]};
}

/// Broadcast against [N, C, H, W] (aligned on the right), `shape` is 1 on
/// both spatial axes: it reads the flat map the same way.
bool spatially_uniform(const std::vector<std::int64_t>& shape) {
  const std::size_t r = shape.size();
  return r <= 4 && (r < 1 || shape[r - 1] == 1) && (r < 2 || shape[r - 2] == 1);
}

class Flattener {
public:
  explicit Flattener(Graph& graph) : graph_(graph) {}

  void run() {
    for (std::size_t n = 0; n < graph_.nodes.size(); ++n)
      if (is_pointwise_conv(graph_, graph_.nodes[n]))
        flatten_from(static_cast<int>(n));
    std::vector<Node> nodes;
    for (std::size_t n = 0; n < graph_.nodes.size(); ++n) {
      for (Node& r : before_[static_cast<int>(n)])
        nodes.push_back(std::move(r));
      nodes.push_back(std::move(graph_.nodes[n]));
      for (Node& r : after_[static_cast<int>(n)])
        nodes.push_back(std::move(r));
    }
    graph_.nodes = std::move(nodes);
  }

private:
  /// A tensor of `shape` that views `source`, made by a reshape placed
  /// before node `reader`.
  int view_before(int reader, int source, std::vector<std::int64_t> shape) {
    const int t = graph_.add_tensor({graph_.tensor(source).name + ".flat", std::move(shape), {}});
    before_[reader].push_back(reshape(source, t));
    return t;
  }

  Node reshape(int from, int to) {
    Node r;
    r.name = graph_.tensor(to).name + ".reshape";
    r.kind = OpKind::Reshape;
    r.inputs = {from};
    r.output = to;
    return r;
  }

  /// The conv at `anchor` and the chain of shape-blind nodes after it,
  /// each the only reader of the one before, computed on the flat map; a
  /// reshape after the chain gives its last tensor the shape it had.
  void flatten_from(int anchor) {
    Node& conv = graph_.nodes[static_cast<std::size_t>(anchor)];
    const std::vector<std::int64_t> map = graph_.tensor(conv.output).shape;
    const int input = conv.inputs[0];
    const int flat_input = view_before(anchor, input, flat(graph_.tensor(input).shape));
    graph_.nodes[static_cast<std::size_t>(anchor)].inputs[0] = flat_input;

    int last = anchor;
    for (;;) {
      const int value = graph_.nodes[static_cast<std::size_t>(last)].output;
      const std::vector<int> readers = graph_.consumers(value);
      if (readers.size() != 1 || graph_.is_graph_output(value))
        break;
      const int next = readers.front();
      const Node& node = graph_.nodes[static_cast<std::size_t>(next)];
      if (!is_shape_blind(node.kind) || graph_.tensor(node.output).shape != map)
        break;
      bool fits = true;
      for (int t : node.inputs) {
        const TensorInfo& info = graph_.tensor(t);
        fits = fits && (t == value || info.shape == map ||
                        (info.is_constant() && spatially_uniform(info.shape)));
      }
      if (!fits)
        break;
      // The value between them is flat now; a full-map operand is read
      // through a flat view of it.
      graph_.tensors[static_cast<std::size_t>(value)].shape = flat(map);
      for (int& t : graph_.nodes[static_cast<std::size_t>(next)].inputs)
        if (t != value && graph_.tensor(t).shape == map)
          t = view_before(next, t, flat(map));
      last = next;
    }
    // The chain's result keeps its id (and its readers); the chain writes a
    // flat tensor of its own that it views.
    Node& end = graph_.nodes[static_cast<std::size_t>(last)];
    const int result = end.output;
    const int flat_result =
        graph_.add_tensor({graph_.tensor(result).name + ".flat", flat(map), {}});
    graph_.nodes[static_cast<std::size_t>(last)].output = flat_result;
    after_[last].push_back(reshape(flat_result, result));
  }

  Graph& graph_;
  std::map<int, std::vector<Node>> before_, after_;
};

} // namespace

void flatten_pointwise_convs(Graph& graph) {
  Flattener(graph).run();
}

} // namespace kiln::graph
