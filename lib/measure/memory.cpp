#include "kiln/measure/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

namespace kiln::measure {

constexpr std::int64_t kSaturated = std::numeric_limits<std::int64_t>::max();

static std::int64_t add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

static std::int64_t mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

std::int64_t measurement_bytes(const ir::ComputeDAG& dag) {
  std::int64_t total = 0;
  for (const ir::Stage& s : dag.stages()) {
    // Validated DAGs have sizes that fit; saturate anyway, as a DAG built by
    // hand may not be.
    std::int64_t elements = 1;
    for (const ir::IterVar& a : s.axes)
      elements = mul(elements, a.extent);
    // The kernel's buffer: an argument or an intermediate it allocates.
    total = add(total, mul(elements, ir::bytes(s.dtype)));
    // The reference's doubles: the interpreter's copy of an input or its
    // cache of a stage, and the outputs kept to compare candidates with.
    total = add(total, mul(elements, s.is_output ? 16 : 8));
  }
  return total;
}

/// The value of `key` in /proc/meminfo, in bytes.
static std::optional<std::int64_t> meminfo_bytes(std::string_view key) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0 || line.size() <= key.size() || line[key.size()] != ':')
      continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::int64_t kib = 0;
    if (fields >> kib)
      return mul(kib, 1024);
  }
  return std::nullopt;
}

/// A number read from a cgroup v2 file, or nullopt ("max", missing).
static std::optional<std::int64_t> cgroup_value(const char* path) {
  std::ifstream in(path);
  std::int64_t v = 0;
  if (in >> v)
    return v;
  return std::nullopt;
}

std::optional<std::int64_t> available_memory_bytes() {
  std::optional<std::int64_t> available = meminfo_bytes("MemAvailable");
  auto limit = cgroup_value("/sys/fs/cgroup/memory.max");
  auto used = cgroup_value("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    std::int64_t left = std::max<std::int64_t>(0, *limit - *used);
    available = available ? std::min(*available, left) : left;
  }
  return available;
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes == kSaturated)
    return "more than 8 EiB";
  constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::optional<Error> check_memory(const ir::ComputeDAG& dag) {
  std::optional<std::int64_t> available = available_memory_bytes();
  if (!available)
    return std::nullopt;
  std::int64_t needed = measurement_bytes(dag);
  if (needed <= *available)
    return std::nullopt;
  return Error("not-enough-memory",
               fmt::format("running and checking '{}' needs about {} (its buffers, and the "
                           "reference's copies in double precision), but this machine has {} "
                           "available; make the op smaller (e.g. with --set) or free memory",
                           dag.name(), format_bytes(needed), format_bytes(*available)));
}

} // namespace kiln::measure
