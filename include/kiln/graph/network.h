// A model as kiln tunes and runs it: the imported graph, its fused groups,
// each group lowered to a compute DAG, and the tasks: the distinct DAGs
// (by workload key), each with its weight, the number of groups it computes.
#ifndef KILN_GRAPH_NETWORK_H
#define KILN_GRAPH_NETWORK_H

#include "kiln/graph/graph.h"
#include "kiln/graph/partition.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/support/error.h"

#include <string>
#include <vector>

namespace kiln::graph {

/// One group as a kernel: its DAG and the graph tensors bound to the DAG's
/// arguments (ComputeDAG::arguments(): the placeholders, then the output).
/// A placeholder may be bound to a reshape of the tensor: the same buffer.
struct GroupKernel {
  ir::ComputeDAG dag;
  std::vector<int> arguments;
};

/// Lowers one group; names are derived from the group's structure only, so
/// groups that compute the same thing on the same shapes get the same DAG.
GroupKernel lower_group(const Graph& graph, const Group& group);

struct Task {
  std::string key;         ///< the DAG's workload key
  ir::ComputeDAG dag;      ///< the DAG of its first group
  std::vector<int> groups; ///< the groups it computes; the weight is their number
  std::string ops;         ///< the model's op types it fuses, e.g. "Conv+BatchNormalization+Relu"
  int weight() const { return static_cast<int>(groups.size()); }
};

struct Network {
  Graph graph;
  std::vector<Group> groups;        ///< in an order that runs the graph
  std::vector<GroupKernel> kernels; ///< one per group
  std::vector<int> task_of_group;   ///< index into tasks
  std::vector<Task> tasks;          ///< in order of first use
};

/// Runs the network with the reference interpreter (ir/interpreter.h),
/// group by group, in double precision: the values of the graph's outputs,
/// given one row-major buffer per graph input. Obviously right, slow: for
/// tests on small models.
std::vector<std::vector<double>> interpret_network(const Network& net,
                                                   const std::vector<std::vector<double>>& inputs);

/// Partitions and lowers an imported graph.
Network build_network(Graph graph);
/// Imports an ONNX model file and builds its network.
Expected<Network> load_network(const std::string& path);

} // namespace kiln::graph

#endif // KILN_GRAPH_NETWORK_H
