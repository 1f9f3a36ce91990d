#include "kiln/record/tuning_curve.h"

#include "kiln/record/history.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace kiln::record {

namespace {

using RunTask = std::pair<std::string, std::string>;

/// Seconds when `trials` trials were done: the first round line that had
/// reached them, or the timestamp of the trial-th record since the first.
double seconds_at(std::int64_t trials, const std::vector<const RoundRecord*>& rounds,
                  const std::vector<const Record*>& records) {
  for (const RoundRecord* r : rounds)
    if (r->trials >= trials)
      return r->elapsed_seconds;
  if (!rounds.empty() && rounds.back()->trials >= static_cast<std::int64_t>(records.size()))
    return rounds.back()->elapsed_seconds;
  if (records.empty() || records.front()->timestamp <= 0)
    return -1;
  std::size_t last = std::min<std::size_t>(records.size(), static_cast<std::size_t>(trials)) - 1;
  // The first record was written after its batch was built and run.
  const MeasureResult& first = records.front()->result;
  return records[last]->timestamp - records.front()->timestamp + first.build_seconds +
         first.run_seconds;
}

} // namespace

std::vector<TuningCurve> tuning_curves(const LoadedLog& log, const std::vector<std::int64_t>& at) {
  std::vector<RunTask> order;
  std::map<RunTask, std::vector<const Record*>> records;
  std::map<RunTask, std::vector<const RoundRecord*>> rounds;
  for (const Record& r : log.records) {
    RunTask key{r.run, r.task.workload_key};
    if (!records.count(key))
      order.push_back(key);
    records[key].push_back(&r);
  }
  for (const RoundRecord& r : log.rounds)
    rounds[{r.run, r.workload_key}].push_back(&r);

  std::vector<TuningCurve> curves;
  for (const RunTask& key : order) {
    std::vector<const Record*>& all = records[key];
    std::stable_sort(all.begin(), all.end(),
                     [](const Record* a, const Record* b) { return a->trial < b->trial; });
    // The trials are each config's first timing; later ones (the tuner's
    // confirmation of its best) change the judgement, not the count.
    std::vector<const Record*> recs;
    std::set<schedule::ProgramKey> seen;
    for (const Record* r : all) {
      std::optional<schedule::ProgramKey> program = r->config.program();
      if (!program || seen.insert(*program).second)
        recs.push_back(r);
    }
    const std::vector<const RoundRecord*>& rs = rounds[key];
    TuningCurve c;
    c.run = key.first;
    c.workload_key = key.second;
    c.trials = static_cast<std::int64_t>(recs.size());
    c.repeats = static_cast<std::int64_t>(all.size() - recs.size());
    c.seconds = seconds_at(c.trials, rs, recs);
    std::vector<const Record*> ranked = ranked_configs(all); // as `kiln best` judges
    if (!ranked.empty())
      c.best_gflops = ranked.front()->gflops();
    for (std::int64_t n : at) {
      CurvePoint p{n, std::min<std::int64_t>(n, c.trials), 0, -1};
      for (std::int64_t i = 0; i < p.reached; ++i)
        p.best_gflops = std::max(p.best_gflops, recs[i]->gflops());
      if (p.reached > 0)
        p.seconds = seconds_at(p.reached, rs, recs);
      c.points.push_back(p);
    }
    curves.push_back(std::move(c));
  }
  return curves;
}

} // namespace kiln::record
