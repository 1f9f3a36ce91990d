// Splitting a graph into fused groups, each one kernel: an anchor (a conv, a
// matmul, a pooling, a reduction, a softmax, a layer norm, a concat) with the
// elementwise and transposing nodes that consume its result fused after it
// (bias, folded batch norm, relu/clip, residual add, gelu's pieces). A node
// joins the group of the input it reads when that input is the group's
// result and nothing else reads it; otherwise it starts a group of its own.
// Reshapes are views: inside a group the reader indexes through them; between
// groups the reader binds the same buffer with the new shape.
#ifndef KILN_GRAPH_PARTITION_H
#define KILN_GRAPH_PARTITION_H

#include "kiln/graph/graph.h"

#include <vector>

namespace kiln::graph {

struct Group {
  std::vector<int> nodes; ///< node indices, in topological order
  int anchor = -1;        ///< the anchor node; -1 for a group of elementwise nodes
  int output = -1;        ///< the tensor the group writes
};

/// The groups in an order that runs the graph (each after the groups it reads).
std::vector<Group> partition(const Graph& graph);

} // namespace kiln::graph

#endif // KILN_GRAPH_PARTITION_H
