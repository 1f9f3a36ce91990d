#include "kiln/measure/measurer.h"

#include "kiln/support/stopwatch.h"

namespace kiln::measure {

std::vector<record::MeasureResult> Measurer::measure(const std::vector<schedule::State>& states) {
  std::vector<const schedule::State*> pointers;
  pointers.reserve(states.size());
  for (const schedule::State& s : states)
    pointers.push_back(&s);
  return measure(std::span<const schedule::State* const>(pointers));
}

ProgramMeasurer::~ProgramMeasurer() = default;

Expected<std::unique_ptr<ProgramMeasurer>> ProgramMeasurer::create(const ir::ComputeDAG& dag,
                                                                   const Target& target,
                                                                   const MeasureOptions& options) {
  std::unique_ptr<ProgramMeasurer> m(new ProgramMeasurer());
  m->dag_ = dag;
  auto reference = Reference::create(dag, target, options.seed, options.check);
  if (!reference)
    return reference.error();
  m->reference_ = std::make_unique<Reference>(std::move(*reference));
  // The worker is forked before the builder starts any thread.
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
