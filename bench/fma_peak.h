// The machine's peak of fused multiply-adds, measured, so that a kernel's
// GFLOPS can be read as a share of what the cores can do, on any CPU the
// bench runs on (the clock a VM's cores run at is not in /proc/cpuinfo).
#ifndef KILN_BENCH_FMA_PEAK_H
#define KILN_BENCH_FMA_PEAK_H

#include "kiln/codegen/target.h"
#include "kiln/support/error.h"

namespace kiln::bench {

/// What fma_peak() measured.
struct FmaPeak {
  double gflops = 0;    ///< f32, an FMA counted as 2 flops, all threads
  int accumulators = 0; ///< independent FMA chains per thread
  int lanes = 0;        ///< f32 lanes of each vector
};

/// GFLOPS of independent vector FMA chains (enough of them to cover the
/// FMA units' latency) in a kernel kiln compiles for `target`, one chain
/// set per thread of `threads` on the runtime's thread pool; the best of
/// `repeats` calls of about 20 ms each.
Expected<FmaPeak> fma_peak(const Target& target, int threads, int repeats = 5);

} // namespace kiln::bench

#endif
