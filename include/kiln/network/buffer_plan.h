// Where each activation of a network lives while it runs: one arena, each
// tensor at a 64-byte aligned offset from the group that writes it to the
// last group that reads it (through reshapes too); tensors whose lives do
// not overlap share bytes. Graph inputs and outputs live in the caller's
// buffers instead.
#ifndef KILN_NETWORK_BUFFER_PLAN_H
#define KILN_NETWORK_BUFFER_PLAN_H

#include "kiln/graph/network.h"

#include <cstdint>
#include <map>

namespace kiln::network {

struct BufferPlan {
  /// Arena offset in bytes of each tensor the groups write that is not a
  /// graph output (view bases only; a reshape uses its base's bytes).
  std::map<int, std::int64_t> offsets;
  std::int64_t arena_bytes = 0;
  /// What the tensors would take without sharing, for the summary.
  std::int64_t unshared_bytes = 0;
};

BufferPlan plan_buffers(const graph::Network& net);

} // namespace kiln::network

#endif // KILN_NETWORK_BUFFER_PLAN_H
