#include "kiln/support/target.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

namespace kiln {

int Target::vector_lanes(int element_bits) const {
  return std::max(1, vector_bits / std::max(8, element_bits));
}

std::string Target::enabled_features() const {
  std::string out;
  std::stringstream ss(features);
  std::string f;
  while (std::getline(ss, f, ',')) {
    if (f.empty() || f[0] != '+')
      continue;
    if (!out.empty())
      out += ' ';
    out.append(f, 1);
  }
  return out;
}

std::string Target::arch() const {
  return triple.substr(0, triple.find('-'));
}

static std::string format_bytes(std::int64_t b) {
  if (b <= 0)
    return "unknown";
  if (b % (1 << 20) == 0)
    return fmt::format("{} MiB", b >> 20);
  return fmt::format("{} KiB", b >> 10);
}

std::string describe_target(const Target& t) {
  return fmt::format("triple:   {}\n"
                     "cpu:      {}\n"
                     "vector:   {} bits ({} x f32)\n"
                     "cores:    {}\n"
                     "caches:   L1d {}, L2 {}, L3 {}\n"
                     "features: {}\n",
                     t.triple, t.cpu, t.vector_bits, t.vector_lanes(32), t.cores,
                     format_bytes(t.l1d_bytes), format_bytes(t.l2_bytes), format_bytes(t.l3_bytes),
                     t.enabled_features());
}

} // namespace kiln
