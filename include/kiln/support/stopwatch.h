// Wall-clock intervals in milliseconds, for reporting where time went.
#ifndef KILN_SUPPORT_STOPWATCH_H
#define KILN_SUPPORT_STOPWATCH_H

#include <chrono>

namespace kiln {

class Stopwatch {
public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  /// Milliseconds since the last lap (or construction), and starts a new lap.
  double lap_ms() {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

private:
  std::chrono::steady_clock::time_point start_;
};

} // namespace kiln

#endif
