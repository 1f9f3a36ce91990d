#include "memory_bandwidth.h"

#include "kiln/support/stopwatch.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace kiln::bench {

double triad_bandwidth_gbs(std::int64_t bytes_per_array, int threads, int repeats) {
  const std::int64_t n = bytes_per_array / static_cast<std::int64_t>(sizeof(float));
  auto array = [n] { return std::unique_ptr<float[]>(new float[static_cast<std::size_t>(n)]); };
  auto a = array(), b = array(), c = array();
  threads = std::max(1, threads);
  auto slice = [&](int t, const auto& body) {
    const std::int64_t begin = n * t / threads, end = n * (t + 1) / threads;
    body(begin, end);
  };
  auto parallel = [&](const auto& body) {
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t)
      pool.emplace_back([&, t] { slice(t, body); });
    slice(0, body);
    for (std::thread& th : pool)
      th.join();
  };
  // First touch by the threads that use each slice (pages on their node).
  parallel([&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
  });
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    Stopwatch clock;
    parallel([&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i)
        a[i] = b[i] + 3.0f * c[i];
    });
    const double seconds = clock.elapsed_ms() / 1e3;
    best = std::max(best, 3.0 * static_cast<double>(n) * sizeof(float) / seconds / 1e9);
  }
  volatile float sink = a[static_cast<std::size_t>(n / 2)];
  (void)sink;
  return best;
}

} // namespace kiln::bench
