// Fuzz target: ONNX import (docs/networks.md). Any bytes must import to a
// graph or give an Error; a graph that imports is partitioned and each group
// lowered to a compute DAG (graph::build_network), which may refuse it with a
// UserError but never crash.
#include "fuzz_input.h"

#include "kiln/graph/network.h"
#include "kiln/graph/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto graph = kiln::graph::import_onnx(bytes, "fuzz.onnx");
  if (!graph) {
    (void)graph.error().render();
    return 0;
  }
  const std::size_t nodes = graph->nodes.size();
  auto net = kiln::catch_user_error([&] { return kiln::graph::build_network(std::move(*graph)); });
  if (!net) {
    (void)net.error().render();
    return 0;
  }
  if (net->kernels.size() != net->groups.size() || net->task_of_group.size() != net->groups.size())
    kiln::fuzz::fail("a network has not one kernel and one task per group");
  std::size_t grouped = 0;
  for (const kiln::graph::Group& g : net->groups)
    grouped += g.nodes.size();
  if (grouped > nodes)
    kiln::fuzz::fail("the groups hold more nodes than the graph");
  return 0;
}
