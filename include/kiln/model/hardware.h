// What the cost model knows of the machine a program runs on: a few numbers
// in every row (docs/features.md, "Hardware"), so that one model trained on
// the records of several CPUs conditions on the CPU it predicts for.
#ifndef KILN_MODEL_HARDWARE_H
#define KILN_MODEL_HARDWARE_H

#include "kiln/support/target.h"

namespace kiln::model {

struct Hardware {
  double vector_bits = 0; ///< the vector registers kiln compiles for
  double fma_flops = 0;   ///< f32 flops a cycle and core from FMAs
  double cores = 0;       ///< hardware threads a kernel runs on
  double l1d_kib = 0;     ///< per core
  double l2_kib = 0;      ///< per core
  double l3_kib = 0;      ///< shared
  bool operator==(const Hardware&) const = default;
};

/// The machine of `target`. Cache sizes and FMA throughput come from a
/// table of the CPUs LLVM names (records do not log caches, and a VM
/// reports them unreliably: one guest claimed a 480 MiB L3), else from the
/// target's own figures, else from its vector width (two FMA pipes).
Hardware hardware_of(const Target& target);

} // namespace kiln::model

#endif // KILN_MODEL_HARDWARE_H
