// The runner: loads a compiled candidate, runs it on the seeded inputs,
// compares every output element with the reference, and times it. Timing
// runs one candidate at a time, so two timings never share the CPU.
//
// Two runners share one implementation of a trial:
//  - in-process: fastest, but a kernel that crashes takes the process down;
//  - isolated (the default of `kiln tune`; --no-isolate turns it off):
//    trials run in kiln-worker, a process started with posix_spawn (never a
//    fork of this one, which may be a multithreaded host: worker.h); a
//    crash (e.g. SIGSEGV) or a trial that passes the timeout kills the
//    worker, the error is recorded, and a fresh worker takes the next
//    candidate.
#ifndef KILN_MEASURE_RUNNER_H
#define KILN_MEASURE_RUNNER_H

#include "kiln/codegen/compiler.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/checker.h"
#include "kiln/measure/reference.h"
#include "kiln/measure/timer.h"
#include "kiln/record/record.h"

#include <memory>
#include <string>

namespace kiln::measure {

struct RunnerOptions {
  TimingOptions timing{.warmup = 1, .repeat = 3, .min_repeat_ms = 10, .flush_cache = false};
  /// Per candidate: the isolated runner kills a worker past it; every
  /// runner times a run too long to repeat within it by its checked run.
  double timeout_seconds = 10;
  /// A candidate whose checked run takes more than this many times the best
  /// time this runner has measured is timed by that one run only: it cannot
  /// be the best, and timing it fully would cost more than the rest of the
  /// batch (0: always time fully). Only a run as long as a timed repeat
  /// (timing.min_repeat_ms) counts: see timed_by_checked_run.
  double slow_cutoff_ratio = 4;
  /// The kiln-worker executable of the isolated runner (and of the
  /// isolated reference); empty: kiln::worker_executable() ($KILN_WORKER,
  /// the build tree's, or the installed one).
  std::string worker;
};

/// Whether a candidate whose checked (first, cold) run took `first_seconds`
/// is timed by that run alone, `best_seconds` being the best median so far.
/// A microsecond kernel's first call is several times slower than its warm
/// calls (cold caches and TLB, sleeping pool threads): judged by it, a
/// config as good as the best would be logged as several times slower and mislead
/// the search and the cost model. So the cutoff needs both a slow ratio and
/// a run at least one timed repeat long, where that one run is a fair
/// measurement and timing it fully is what costs.
/// A checked run so long that it and `timing.repeat` more would take over
/// half of `timeout_seconds` stands for the timing too, best or not: a
/// naive kernel of seconds a call, timed fully, would pass the timeout and
/// the tuner would lose its baseline.
bool timed_by_checked_run(double first_seconds, double best_seconds, const RunnerOptions& options);

class Runner {
public:
  virtual ~Runner() = default;
  /// Measures one compiled candidate. Never throws; errors are in the result.
  virtual record::MeasureResult run(const codegen::ObjectCode& object) = 0;
};

/// Runs candidates in this process.
Expected<std::unique_ptr<Runner>> make_local_runner(const ir::ComputeDAG& dag,
                                                    const Reference& reference,
                                                    const RunnerOptions& options);

/// Runs candidates in a kiln-worker process, replaced after a crash or a
/// timeout. Safe in a multithreaded process: the worker is spawned, not
/// forked. A "worker-missing" Error when `options.worker` (or the default)
/// cannot be executed.
Expected<std::unique_ptr<Runner>> make_isolated_runner(const ir::ComputeDAG& dag,
                                                       const Reference& reference,
                                                       const RunnerOptions& options);

} // namespace kiln::measure

#endif
