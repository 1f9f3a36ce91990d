#include "kiln/model/hardware.h"

#include <array>
#include <string_view>

namespace kiln::model {

namespace {

/// A CPU's figures per core (L3: a typical part's whole cache).
struct KnownCpu {
  std::string_view name;
  double fma_flops, l1d_kib, l2_kib, l3_kib;
};

// FMA flops a cycle = pipes × f32 lanes × 2. Zen 4 runs a 512-bit FMA as
// two 256-bit halves: its rate is Zen 3's.
constexpr std::array<KnownCpu, 16> kKnownCpus = {{
    {"haswell", 32, 32, 256, 8192},
    {"broadwell", 32, 32, 256, 8192},
    {"skylake", 32, 32, 256, 8192},
    {"alderlake", 32, 48, 1280, 30720},
    {"skylake-avx512", 64, 32, 1024, 39424},
    {"cascadelake", 64, 32, 1024, 39424},
    {"icelake-server", 64, 48, 1280, 49152},
    {"sapphirerapids", 64, 48, 2048, 107520},
    // The Sapphire Rapids-class guest whose model number LLVM reads as
    // rocketlake (docs/benchmarks.md, "The machines").
    {"rocketlake", 64, 48, 2048, 107520},
    {"znver1", 16, 32, 512, 8192},
    {"znver2", 32, 32, 512, 16384},
    {"znver3", 32, 32, 512, 32768},
    {"znver4", 32, 32, 1024, 32768},
    {"znver5", 64, 48, 1024, 32768},
    {"neoverse-v1", 32, 64, 1024, 32768},
    {"neoverse-n1", 16, 64, 1024, 32768},
}};

} // namespace

Hardware hardware_of(const Target& target) {
  Hardware hw;
  hw.vector_bits = target.vector_bits;
  hw.cores = target.cores;
  for (const KnownCpu& cpu : kKnownCpus)
    if (cpu.name == target.cpu) {
      hw.fma_flops = cpu.fma_flops;
      hw.l1d_kib = cpu.l1d_kib;
      hw.l2_kib = cpu.l2_kib;
      hw.l3_kib = cpu.l3_kib;
      return hw;
    }
  // Two FMA pipes of the vector width, the usual design.
  hw.fma_flops = 2.0 * 2.0 * target.vector_bits / 32.0;
  hw.l1d_kib = static_cast<double>(target.l1d_bytes) / 1024;
  hw.l2_kib = static_cast<double>(target.l2_bytes) / 1024;
  hw.l3_kib = static_cast<double>(target.l3_bytes) / 1024;
  return hw;
}

} // namespace kiln::model
