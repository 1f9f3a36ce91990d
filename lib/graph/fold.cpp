#include "fold.h"

#include "kiln/support/error.h"

namespace kiln::graph {

void fold_batch_norms(Graph& graph) {
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    Node& bn = graph.nodes[i];
    if (bn.kind != OpKind::BatchNorm)
      continue;
    const int conv_output = bn.inputs[0];
    const int p = graph.producer(conv_output);
    if (p < 0 || graph.nodes[static_cast<std::size_t>(p)].kind != OpKind::Conv ||
        graph.consumers(conv_output).size() != 1 || graph.is_graph_output(conv_output))
      continue;
    Node& conv = graph.nodes[static_cast<std::size_t>(p)];
    const std::vector<float>& scale = *graph.tensor(bn.inputs[1]).data;
    const std::vector<float>& shift = *graph.tensor(bn.inputs[2]).data;
    const TensorInfo& w = graph.tensor(conv.inputs[1]);
    const std::size_t k = scale.size();
    KILN_ASSERT(static_cast<std::size_t>(w.shape[0]) == k, "a BatchNorm after a conv has one "
                                                           "scale per output channel");
    const std::size_t per_channel = w.data->size() / k;
    std::vector<float> weights(*w.data);
    for (std::size_t c = 0; c < k; ++c)
      for (std::size_t j = 0; j < per_channel; ++j)
        weights[c * per_channel + j] *= scale[c];
    std::vector<float> bias(shift);
    if (conv.inputs.size() == 3) {
      const std::vector<float>& b = *graph.tensor(conv.inputs[2]).data;
      for (std::size_t c = 0; c < k; ++c)
        bias[c] += b[c] * scale[c];
    }
    const std::string base = graph.tensor(bn.output).name;
    const std::vector<std::int64_t> w_shape = w.shape;
    const int new_w = graph.add_constant(base + ".folded_weight", w_shape, std::move(weights));
    const int new_b =
        graph.add_constant(base + ".folded_bias", {static_cast<std::int64_t>(k)}, std::move(bias));
    // graph.add_constant may have moved the nodes' tensors, not the nodes.
    Node& folded = graph.nodes[static_cast<std::size_t>(p)];
    folded.inputs = {folded.inputs[0], new_w, new_b};
    folded.output = graph.nodes[i].output;
    folded.folded.push_back("BatchNormalization");
    graph.nodes.erase(graph.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    --i;
  }
}

} // namespace kiln::graph
