#include "kiln/measure/timer.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace kiln::measure {

double Timing::median() const {
  if (seconds.empty())
    return 0;
  std::vector<double> s = seconds;
  std::sort(s.begin(), s.end());
  size_t n = s.size();
  return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double Timing::min() const {
  return seconds.empty() ? 0 : *std::min_element(seconds.begin(), seconds.end());
}

static double seconds_for(const std::function<void()>& fn, int number) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < number; ++i)
    fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Writes a buffer larger than the last-level cache.
static void flush_caches() {
  static std::vector<char> junk(128u << 20);
  static char value = 0;
  std::memset(junk.data(), ++value, junk.size());
}

Timing time_function(const std::function<void()>& fn, const TimingOptions& options) {
  for (int i = 0; i < options.warmup; ++i)
    fn();
  Timing t;
  t.number = 1;
  if (!options.flush_cache) {
    // Raise number until one repeat is long enough to time reliably.
    double min_s = options.min_repeat_ms / 1000.0;
    for (double s = seconds_for(fn, t.number); s < min_s; s = seconds_for(fn, t.number)) {
      int needed = s > 0 ? static_cast<int>(t.number * min_s / s * 1.1) + 1 : t.number * 10;
      t.number = std::max(needed, static_cast<int>(t.number * 1.618) + 1);
    }
  }
  for (int r = 0; r < options.repeat; ++r) {
    if (options.flush_cache)
      flush_caches();
    t.seconds.push_back(seconds_for(fn, t.number) / t.number);
  }
  return t;
}

} // namespace kiln::measure
