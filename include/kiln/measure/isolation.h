// Running a computation that may crash or hang (a kernel, the reference
// computation of an op) in kiln's measurement worker, a process of its own
// (worker.h): a signal or a timeout in it becomes an Error of the caller,
// never the caller's own end.
#ifndef KILN_MEASURE_ISOLATION_H
#define KILN_MEASURE_ISOLATION_H

#include <string>
#include <utility>

namespace kiln::measure {

/// Whether a computation runs in the worker process, and for how long.
struct Isolation {
  // A constructor, not an aggregate: `Isolation{true, 30, "--ref"}` leaves
  // the worker to its default without a -Wmissing-field-initializers.
  Isolation(bool enabled = false, double timeout_seconds = 600,
            std::string timeout_option = "--timeout", std::string worker = {})
      : enabled(enabled), timeout_seconds(timeout_seconds),
        timeout_option(std::move(timeout_option)), worker(std::move(worker)) {}

  bool enabled;
  double timeout_seconds;
  /// The option that sets the timeout, named in the timeout's error.
  std::string timeout_option;
  /// The kiln-worker executable; empty: kiln::worker_executable()
  /// ($KILN_WORKER, the build tree's, or the installed one).
  std::string worker;
};

} // namespace kiln::measure

#endif
