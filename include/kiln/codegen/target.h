// The machine kernels are compiled for: by default the host, detected through
// LLVM (CPU name, features, vector register width from the target's cost
// model), or a named one for emitting object code for another machine.
#ifndef KILN_CODEGEN_TARGET_H
#define KILN_CODEGEN_TARGET_H

#include "kiln/ir/type.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <string>

namespace kiln::codegen {

struct Target {
  std::string triple;   ///< e.g. x86_64-pc-linux-gnu
  std::string cpu;      ///< e.g. znver4
  std::string features; ///< LLVM feature string, "+avx2,+fma,-sse4a,…"
  int vector_bits = 0;  ///< fixed vector register width the backend uses
  int cores = 1;        ///< hardware threads available
  std::int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0; ///< 0 when unknown

  /// The machine this process runs on.
  static Target host();
  /// A named machine (`--target x86_64-linux-gnu --mcpu znver4`): features
  /// and vector width come from LLVM's model of that CPU; cores and caches
  /// are copied from the host. An unknown triple or CPU is an Error.
  static Expected<Target> named(const std::string& triple, const std::string& cpu);

  /// Lanes of one vector register for an element type (16 for f32 on AVX-512).
  int vector_lanes(ir::ScalarType type) const;
  /// Multi-line human-readable description (`kiln target`).
  std::string describe() const;
  /// The enabled features only, sorted, without '+'.
  std::string enabled_features() const;
};

} // namespace kiln::codegen

#endif // KILN_CODEGEN_TARGET_H
