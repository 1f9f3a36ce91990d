#include "kiln/measure/measurer.h"

#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::measure {

/// The longest per-candidate timeout: a day. The isolated runner waits for
/// an answer in whole milliseconds of an int.
constexpr double kMaxTimeoutSeconds = 86400;

std::optional<Error> check_options(const MeasureOptions& options) {
  const RunnerOptions& r = options.runner;
  if (!(r.timeout_seconds > 0 && r.timeout_seconds <= kMaxTimeoutSeconds))
    return Error("bad-option",
                 fmt::format("--timeout {:g}: a candidate needs more than 0 s to run; give "
                             "seconds in (0, {:g}]",
                             r.timeout_seconds, kMaxTimeoutSeconds));
  if (!(options.reference_timeout_seconds > 0 &&
        options.reference_timeout_seconds <= kMaxTimeoutSeconds))
    return Error("bad-option", fmt::format("--reference-timeout {:g}: give seconds in (0, {:g}]",
                                           options.reference_timeout_seconds, kMaxTimeoutSeconds));
  if (r.timing.repeat < 1)
    return Error("bad-option", fmt::format("--repeat {}: a kernel is timed at least once; give "
                                           "1 or more",
                                           r.timing.repeat));
  if (r.timing.warmup < 0)
    return Error("bad-option",
                 fmt::format("warmup {}: give 0 or more warm-up calls", r.timing.warmup));
  if (!(r.timing.min_repeat_ms >= 0 && std::isfinite(r.timing.min_repeat_ms)))
    return Error("bad-option", fmt::format("--min-repeat-ms {:g}: give 0 or more milliseconds",
                                           r.timing.min_repeat_ms));
  return std::nullopt;
}

std::vector<record::MeasureResult> Measurer::measure(const std::vector<schedule::State>& states) {
  std::vector<const schedule::State*> pointers;
  pointers.reserve(states.size());
  for (const schedule::State& s : states)
    pointers.push_back(&s);
  return measure(std::span<const schedule::State* const>(pointers));
}

Expected<std::unique_ptr<Measurer>> make_program_measurer(const ir::ComputeDAG& dag,
                                                          const Target& target,
                                                          const MeasureOptions& options) {
  auto m = ProgramMeasurer::create(dag, target, options);
  if (!m)
    return m.error();
  return std::unique_ptr<Measurer>(std::move(*m));
}

void Measurer::submit(std::span<const schedule::State* const> states) {
  submitted_ = measure(states);
}

std::vector<record::MeasureResult> Measurer::collect() {
  return std::move(submitted_);
}

ProgramMeasurer::~ProgramMeasurer() = default;

Expected<std::unique_ptr<ProgramMeasurer>> ProgramMeasurer::create(const ir::ComputeDAG& dag,
                                                                   const Target& target,
                                                                   const MeasureOptions& options) {
  if (auto err = check_options(options))
    return *err;
  std::unique_ptr<ProgramMeasurer> m(new ProgramMeasurer());
  m->dag_ = dag;
  auto reference = Reference::create(dag, target, options.seed, options.check,
                                     Isolation{options.isolate, options.reference_timeout_seconds,
                                               "--reference-timeout", options.runner.worker});
  if (!reference)
    return reference.error();
  m->reference_ = std::make_unique<Reference>(std::move(*reference));
  // The worker is spawned, not forked: the builder's threads (or a host's)
  // may already run.
  auto runner = options.isolate ? make_isolated_runner(m->dag_, *m->reference_, options.runner)
                                : make_local_runner(m->dag_, *m->reference_, options.runner);
  if (!runner)
    return runner.error();
  m->runner_ = std::move(*runner);
  auto builder = Builder::create(target, options.build_threads);
  if (!builder)
    return builder.error();
  m->builder_ = std::move(*builder);
  return m;
}

std::vector<record::MeasureResult>
ProgramMeasurer::measure(std::span<const schedule::State* const> states) {
  Stopwatch clock;
  std::vector<BuildResult> built = builder_->build(states);
  std::vector<record::MeasureResult> results;
  for (BuildResult& b : built) {
    record::MeasureResult r;
    if (b.object) {
      r = runner_->run(*b.object);
    } else {
      r.error = b.error;
      r.message = b.message;
    }
    r.build_seconds = b.seconds;
    stats_.build_seconds += b.seconds;
    stats_.run_seconds += r.run_seconds;
    ++stats_.trials;
    ++stats_.by_error[static_cast<size_t>(r.error)];
    results.push_back(std::move(r));
  }
  stats_.wall_seconds += clock.elapsed_ms() / 1e3;
  return results;
}

} // namespace kiln::measure
