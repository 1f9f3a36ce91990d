#include "short_list.h"

#include <algorithm>
#include <set>

namespace kiln::search {

ScoredPoints shortlist(SearchStrategy& strategy, SearchContext& ctx, int rounds, int per_round,
                       double seconds, const Stopwatch& clock) {
  ScoredPoints scored;
  ProgramSet proposed = ctx.measured_programs;
  for (int r = 0; r < rounds; ++r) {
    if (seconds > 0 && clock.elapsed_ms() / 1e3 >= seconds)
      break;
    std::vector<Point> points = strategy.propose(ctx, per_round);
    if (points.empty())
      break;
    std::vector<double> scores = ctx.predict(points);
    for (std::size_t i = 0; i < points.size(); ++i) {
      // Proposed once is enough: the next round explores elsewhere.
      if (std::optional<schedule::ProgramKey> k = ctx.key(points[i]))
        ctx.measured_programs.insert(*k);
      scored.emplace_back(scores[i], points[i]);
    }
  }
  ctx.measured_programs = std::move(proposed);
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  return scored;
}

ScoredPoints cover_families(const ScoredPoints& scored, std::size_t budget,
                            const SearchSpace& space) {
  if (scored.size() <= budget)
    return scored;
  ScoredPoints out;
  out.reserve(budget);
  std::vector<bool> taken(scored.size(), false);
  // Scored is best first, so the first config met of a family is its best.
  std::set<int> seen;
  const std::size_t leaders = budget / 2;
  for (std::size_t i = 0; i < scored.size() && out.size() < leaders; ++i)
    if (seen.insert(space.family(scored[i].second)).second) {
      out.push_back(scored[i]);
      taken[i] = true;
    }
  for (std::size_t i = 0; i < scored.size() && out.size() < budget; ++i)
    if (!taken[i])
      out.push_back(scored[i]);
  return out;
}

} // namespace kiln::search
