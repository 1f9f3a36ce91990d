#include "kiln/graph/network.h"

#include "fold.h"

#include "kiln/graph/onnx_import.h"

#include <fmt/format.h>

#include <map>

namespace kiln::graph {

static std::string fused_ops(const Graph& graph, const Group& group) {
  std::string ops;
  for (int n : group.nodes) {
    const Node& node = graph.nodes[static_cast<std::size_t>(n)];
    std::string part(op_kind_name(node.kind));
    for (const std::string& f : node.folded)
      part += "+" + f;
    ops += ops.empty() ? part : "+" + part;
  }
  return ops;
}

Network build_network(Graph graph) {
  flatten_pointwise_convs(graph);
  Network net;
  net.groups = partition(graph);
  std::map<std::string, int> task_of_key;
  for (std::size_t g = 0; g < net.groups.size(); ++g) {
    GroupKernel kernel = lower_group(graph, net.groups[g]);
    std::string key = kernel.dag.workload_key();
    auto [it, added] = task_of_key.emplace(key, static_cast<int>(net.tasks.size()));
    if (added)
      net.tasks.push_back(Task{key, kernel.dag, {}, fused_ops(graph, net.groups[g])});
    net.tasks[static_cast<std::size_t>(it->second)].groups.push_back(static_cast<int>(g));
    net.task_of_group.push_back(it->second);
    net.kernels.push_back(std::move(kernel));
  }
  net.graph = std::move(graph);
  return net;
}

Expected<Network> load_network(const std::string& path) {
  Expected<Graph> graph = import_onnx_file(path);
  if (!graph.ok())
    return graph.error();
  return catch_user_error([&] { return build_network(std::move(*graph)); });
}

} // namespace kiln::graph
