#include "kiln/measure/timer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

/// Calls per repeat for a repeat of at least `min_s`, when `number` calls
/// took `s` seconds (10% margin: a call's time varies).
static int calls_for(double min_s, double s, int number) {
  double calls = std::ceil(number * min_s / s * 1.1);
  return static_cast<int>(std::clamp(calls, 1.0, 1e9));
}

/// Writes a buffer larger than the last-level cache.
static void flush_caches() {
  static std::vector<char> junk(128u << 20);
  static char value = 0;
  std::memset(junk.data(), ++value, junk.size());
}

Timing time_function(const std::function<void()>& fn, const TimingOptions& options,
                     double first_call_seconds) {
  for (int i = 0; i < options.warmup; ++i)
    fn();
  Timing t;
  t.number = 1;
  if (!options.flush_cache) {
    // Raise number until one repeat is long enough to time reliably; that
    // repeat is the first one kept.
    double min_s = options.min_repeat_ms / 1000.0;
    if (first_call_seconds > 0)
      t.number = calls_for(min_s, first_call_seconds, 1);
    for (double s = seconds_for(fn, t.number);; s = seconds_for(fn, t.number)) {
      if (s >= min_s) {
        if (options.repeat > 0)
          t.seconds.push_back(s / t.number);
        break;
      }
      t.number =
          s > 0 ? std::max(calls_for(min_s, s, t.number), static_cast<int>(t.number * 1.618) + 1)
                : t.number * 10;
    }
  }
  while (static_cast<int>(t.seconds.size()) < options.repeat) {
    if (options.flush_cache)
      flush_caches();
    t.seconds.push_back(seconds_for(fn, t.number) / t.number);
  }
  return t;
}

} // namespace kiln::measure
