#include "kiln/network/buffer_plan.h"

#include <algorithm>
#include <vector>

namespace kiln::network {

namespace {
struct Block {
  std::int64_t offset, bytes;
  int last_use; ///< index of the last group that reads it
};
constexpr std::int64_t alignment = 64;
} // namespace

BufferPlan plan_buffers(const graph::Network& net) {
  const graph::Graph& g = net.graph;
  // The last group reading each view base.
  std::map<int, int> last_use;
  for (std::size_t k = 0; k < net.kernels.size(); ++k) {
    const std::vector<int>& args = net.kernels[k].arguments;
    for (std::size_t a = 0; a + 1 < args.size(); ++a)
      if (!g.tensor(args[a]).is_constant())
        last_use[g.view_base(args[a])] = static_cast<int>(k);
  }
  std::vector<bool> graph_output(g.tensors.size(), false);
  for (int o : g.outputs)
    graph_output[static_cast<std::size_t>(g.view_base(o))] = true;

  BufferPlan plan;
  std::vector<Block> live; // sorted by offset
  for (std::size_t k = 0; k < net.groups.size(); ++k) {
    const int t = net.groups[k].output;
    if (graph_output[static_cast<std::size_t>(t)])
      continue;
    // Free what no group from this one on reads. A group's own inputs are
    // read by it, so its output never overlaps them.
    std::erase_if(live, [&](const Block& b) { return b.last_use < static_cast<int>(k); });
    const std::int64_t bytes =
        (g.tensor(t).num_elements() * 4 + alignment - 1) / alignment * alignment;
    auto it = last_use.find(t);
    const int until = it == last_use.end() ? static_cast<int>(k) : it->second;
    // First fit: the lowest gap between live blocks that holds it.
    std::int64_t at = 0;
    for (const Block& b : live) {
      if (b.offset - at >= bytes)
        break;
      at = std::max(at, b.offset + b.bytes);
    }
    live.push_back({at, bytes, until});
    std::sort(live.begin(), live.end(),
              [](const Block& a, const Block& b) { return a.offset < b.offset; });
    plan.offsets[t] = at;
    plan.arena_bytes = std::max(plan.arena_bytes, at + bytes);
    plan.unshared_bytes += bytes;
  }
  return plan;
}

} // namespace kiln::network
