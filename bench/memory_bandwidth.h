// The machine's memory bandwidth, measured, so that memory-bound kernels
// (a GEMV, a softmax, a layer norm) are judged in GB/s against what the
// memory can give, not only in GFLOPS.
#ifndef KILN_BENCH_MEMORY_BANDWIDTH_H
#define KILN_BENCH_MEMORY_BANDWIDTH_H

#include <cstdint>

namespace kiln::bench {

/// GB/s of a STREAM-style triad (a[i] = b[i] + s * c[i]: two reads and a
/// write per element, counted as 12 bytes) over arrays of `bytes_per_array`
/// each, split over `threads` threads; the best of `repeats` passes.
double triad_bandwidth_gbs(std::int64_t bytes_per_array, int threads, int repeats = 5);

} // namespace kiln::bench

#endif
