#include "kiln/measure/nearest_pick.h"

#include "kiln/support/version.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<std::optional<NearestPick>> pick_nearest_shape(const std::vector<record::Record>& records,
                                                        const ir::ComputeDAG& dag,
                                                        const Target& target,
                                                        const MeasureOptions& options,
                                                        std::size_t candidates, std::string* why) {
  std::vector<record::NearestConfig> configs =
      record::nearest_shape_configs(records, dag, target, candidates);
  if (configs.empty()) {
    if (why)
      *why = fmt::format("no record of another shape of {} whose steps fit it", dag.name());
    return std::optional<NearestPick>();
  }
  std::vector<schedule::State> states;
  std::vector<const record::NearestConfig*> built;
  for (const record::NearestConfig& c : configs) {
    auto state = schedule::State::replay(dag, c.config.steps);
    KILN_ASSERT(state.ok(), "refit_steps returned steps that do not replay");
    states.push_back(std::move(*state));
    built.push_back(&c);
  }
  auto measurer = ProgramMeasurer::create(dag, target, options);
  if (!measurer)
    return measurer.error();
  std::vector<const schedule::State*> pointers;
  for (const schedule::State& s : states)
    pointers.push_back(&s);
  std::vector<record::MeasureResult> results = (*measurer)->measure(pointers);
  std::optional<std::size_t> best;
  std::size_t right = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].ok())
      continue;
    ++right;
    if (!best || results[i].median() < results[*best].median())
      best = i;
  }
  if (!best) {
    if (why)
      *why = fmt::format("none of the {} nearest-shape configs is right here (the first: {})",
                         results.size(), results.front().message);
    return std::optional<NearestPick>();
  }
  NearestPick pick;
  record::Record& r = pick.record;
  r.run = "nearest-shape";
  r.task = record::TaskInfo::from_dag(dag, built[*best]->from->task.source);
  r.target = target;
  r.config = built[*best]->config;
  r.result = results[*best];
  r.trial = -1;
  r.kiln_version = version();
  pick.description = fmt::format(
      "nearest shape: {}; checked and timed here: {:.4g} ms ({} of {} candidates right)",
      built[*best]->describe(), r.result.median() * 1e3, right, results.size());
  return std::optional<NearestPick>(std::move(pick));
}

} // namespace kiln::measure
