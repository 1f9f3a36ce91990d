// The machine kernels are compiled for, as plain data: what records, search
// spaces and reports need to know of it. Filling it in from the host (or
// from LLVM's model of a named CPU) is codegen's job (kiln/codegen/target.h);
// everything else reads it without linking LLVM.
#ifndef KILN_SUPPORT_TARGET_H
#define KILN_SUPPORT_TARGET_H

#include <cstdint>
#include <string>

namespace kiln {

struct Target {
  std::string triple;   ///< e.g. x86_64-pc-linux-gnu
  std::string cpu;      ///< e.g. znver4
  std::string features; ///< LLVM feature string, "+avx2,+fma,-sse4a,…"
  int vector_bits = 0;  ///< fixed vector register width the backend uses
  int cores = 1;        ///< hardware threads available
  std::int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0; ///< 0 when unknown

  /// Lanes of one vector register for elements of `element_bits` bits (16
  /// for f32 on AVX-512); at least 1.
  int vector_lanes(int element_bits) const;
  /// The enabled features only, sorted, without '+'.
  std::string enabled_features() const;
  /// "x86_64" of "x86_64-pc-linux-gnu".
  std::string arch() const;
};

/// As `kiln target` prints it: triple, CPU, vector width, cores, caches,
/// features, a line each.
std::string describe_target(const Target& target);

} // namespace kiln

#endif // KILN_SUPPORT_TARGET_H
