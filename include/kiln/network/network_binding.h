// Where each argument of each group of a network points while it runs: a
// place in the activation arena (buffer_plan.h), a constant tensor (a
// weight), or one of the caller's input or output buffers. CompiledNetwork
// turns the places into addresses in this process; a network export writes
// them into the model's run function (docs/library.md, "A whole model").
#ifndef KILN_NETWORK_NETWORK_BINDING_H
#define KILN_NETWORK_NETWORK_BINDING_H

#include "kiln/graph/network.h"
#include "kiln/network/buffer_plan.h"

#include <cstdint>
#include <vector>

namespace kiln::network {

struct ArgumentPlace {
  enum Kind : std::uint8_t { Arena, Constant, Input, Output } kind = Arena;
  std::int64_t offset = 0; ///< Arena: bytes from the arena's start
  /// Constant: the tensor's id in the graph; Input, Output: its position
  /// among the graph's inputs or outputs.
  int index = 0;
};

/// A graph output that no group writes into the caller's buffer (a graph
/// input given back, a second output of one tensor): copied after the run.
struct OutputCopy {
  ArgumentPlace from;
  int output = 0;
  std::int64_t bytes = 0;
};

struct NetworkBinding {
  BufferPlan plan;
  /// Per group, one place per argument of its DAG (GroupKernel::arguments).
  std::vector<std::vector<ArgumentPlace>> groups;
  std::vector<OutputCopy> output_copies;
  /// The constant tensors the groups read, each once, in order of first use.
  std::vector<int> constants;
};

NetworkBinding bind_network(const graph::Network& net);

} // namespace kiln::network

#endif // KILN_NETWORK_NETWORK_BINDING_H
