#include "kiln/network/network_binding.h"

#include "kiln/support/error.h"

#include <set>

namespace kiln::network {

NetworkBinding bind_network(const graph::Network& net) {
  const graph::Graph& g = net.graph;
  NetworkBinding binding;
  binding.plan = plan_buffers(net);
  std::set<int> seen_constants;
  auto place_of = [&](int tensor) {
    if (g.tensor(tensor).is_constant()) {
      if (seen_constants.insert(tensor).second)
        binding.constants.push_back(tensor);
      return ArgumentPlace{ArgumentPlace::Constant, 0, tensor};
    }
    // A reshape reads and writes its base's bytes; an output wins over an
    // input of the same base (a graph output that is an input is copied).
    const int base = g.view_base(tensor);
    for (std::size_t o = 0; o < g.outputs.size(); ++o)
      if (g.view_base(g.outputs[o]) == base)
        return ArgumentPlace{ArgumentPlace::Output, 0, static_cast<int>(o)};
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (g.inputs[i] == base)
        return ArgumentPlace{ArgumentPlace::Input, 0, static_cast<int>(i)};
    auto at = binding.plan.offsets.find(base);
    KILN_ASSERT(at != binding.plan.offsets.end(), "every activation has a buffer");
    return ArgumentPlace{ArgumentPlace::Arena, at->second, 0};
  };
  for (const graph::GroupKernel& kernel : net.kernels) {
    std::vector<ArgumentPlace> places;
    for (int tensor : kernel.arguments)
      places.push_back(place_of(tensor));
    binding.groups.push_back(std::move(places));
  }
  for (std::size_t o = 0; o < g.outputs.size(); ++o) {
    const ArgumentPlace from = place_of(g.outputs[o]);
    if (from.kind != ArgumentPlace::Output || from.index != static_cast<int>(o))
      binding.output_copies.push_back(
          {from, static_cast<int>(o), g.tensor(g.outputs[o]).num_elements() * 4});
  }
  return binding;
}

} // namespace kiln::network
