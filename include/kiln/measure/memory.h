// What measuring an op takes in memory, against what the machine has, so
// that an op too large to measure is refused before anything is allocated
// (instead of meeting the OOM killer half way through).
#ifndef KILN_MEASURE_MEMORY_H
#define KILN_MEASURE_MEMORY_H

#include "kiln/ir/compute_dag.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <optional>

namespace kiln::measure {

/// The bytes one process needs to run and check `dag`: the argument
/// buffers, the intermediate buffers a kernel allocates, and the
/// reference's copies in double precision (the inputs the interpreter reads,
/// the stages it caches, the outputs a candidate is compared with).
/// Saturates at INT64_MAX.
std::int64_t measurement_bytes(const ir::ComputeDAG& dag);

/// The memory this process may still take: MemAvailable from /proc/meminfo,
/// lowered to the cgroup's limit when there is one. Nullopt when unknown.
std::optional<std::int64_t> available_memory_bytes();

/// A "not-enough-memory" error saying how much measuring `dag` needs and
/// how much there is, or nothing when it fits (or the memory is unknown).
std::optional<Error> check_memory(const ir::ComputeDAG& dag);

/// "1.5 GiB", "12 MiB", "800 B".
std::string format_bytes(std::int64_t bytes);

} // namespace kiln::measure

#endif
