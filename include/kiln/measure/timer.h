// The timing protocol (as in TVM): one or more warm-up calls, then `number`
// calls per repeat, `number` raised until one repeat lasts at least
// `min_repeat_ms`, then `repeat` repeats. Each repeat yields the mean time of
// one call; the report keeps all of them with their median and minimum.
// The first repeat long enough is kept, so calibrating costs no extra calls
// when `number` was guessed right; a caller that has already timed one call
// (a checked run) passes it as the guess.
// With `flush_cache`, number is 1 and the caches are flushed (a large buffer
// is written) before every repeat, so each call starts cold.
#ifndef KILN_MEASURE_TIMER_H
#define KILN_MEASURE_TIMER_H

#include <functional>
#include <string>
#include <vector>

namespace kiln::measure {

struct TimingOptions {
  int warmup = 1;
  int repeat = 5;
  double min_repeat_ms = 50;
  bool flush_cache = false;
};

struct Timing {
  int number = 0;              ///< calls per repeat
  std::vector<double> seconds; ///< mean seconds per call, one per repeat
  double median() const;
  double min() const;
};

/// `first_call_seconds`, when positive, is the time of one earlier call of
/// `fn`: `number` starts from it instead of from 1.
Timing time_function(const std::function<void()>& fn, const TimingOptions& options,
                     double first_call_seconds = 0);

} // namespace kiln::measure

#endif
