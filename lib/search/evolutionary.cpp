#include "strategy_util.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kiln::search {

namespace {

/// How the race among a space's families (sketches) stands.
struct Race {
  std::vector<int> trials;  ///< measured configs per family
  std::vector<double> best; ///< best throughput per family
  int leader = -1;          ///< the family holding the best measured config
  std::int64_t stalled = 0; ///< trials since the best measured config last improved
};

Race race_of(const SearchContext& ctx) {
  const int families = ctx.space.families();
  Race r{std::vector<int>(families, 0), std::vector<double>(families, 0), -1, 0};
  double lead = 0;
  for (const MeasuredPoint& m : ctx.measured) {
    int f = ctx.space.family(m.point);
    ++r.trials[f];
    r.best[f] = std::max(r.best[f], m.throughput);
    ++r.stalled;
    if (m.throughput > lead) {
      lead = m.throughput;
      r.leader = f;
      r.stalled = 0;
    }
  }
  return r;
}

/// The sketches behind the leading one that still get picks of their own:
/// every sketch for its first `warmup` trials, then those whose best is at
/// least `cutoff` of the best measured.
std::vector<int> families_in_race(const Race& race, int warmup, double cutoff) {
  std::vector<int> out;
  const double lead = race.leader >= 0 ? race.best[race.leader] : 0;
  for (int f = 0; f < static_cast<int>(race.trials.size()); ++f)
    if (f != race.leader && (race.trials[f] < warmup || race.best[f] >= cutoff * lead))
      out.push_back(f);
  return out;
}

class EvolutionaryStrategy : public SearchStrategy {
public:
  explicit EvolutionaryStrategy(const StrategyOptions& o) : o_(o) {}
  std::string name() const override { return "evolutionary"; }
  bool uses_model() const override { return true; }

  std::vector<Point> propose(SearchContext& ctx, int n) override {
    if (!ctx.model.trained())
      return ctx.random_unmeasured(n);
    const int families = ctx.space.families();
    std::vector<std::vector<const MeasuredPoint*>> best(families);
    for (const MeasuredPoint& m : ctx.measured)
      if (m.throughput > 0)
        best[ctx.space.family(m.point)].push_back(&m);
    // Each family evolves in its own share of the population: its best
    // measured configs, then samples of it.
    int size = std::max(o_.population, 2 * n);
    std::vector<Point> pop;
    std::vector<size_t> begin; // family f holds pop[begin[f], begin[f + 1])
    for (int f = 0; f < families; ++f) {
      begin.push_back(pop.size());
      auto& b = best[f];
      std::sort(b.begin(), b.end(), [](auto* x, auto* y) { return x->throughput > y->throughput; });
      int share = size / families + (f < size % families ? 1 : 0);
      int from_measured =
          std::min(static_cast<int>(share * o_.init_measured_ratio), static_cast<int>(b.size()));
      for (int i = 0; i < from_measured; ++i)
        pop.push_back(b[i]->point);
      for (Point& p : ctx.random_unmeasured(share - from_measured, {}, families > 1 ? f : -1))
        pop.push_back(std::move(p));
    }
    begin.push_back(pop.size());

    std::map<schedule::ProgramKey, std::pair<double, Point>> found;
    std::uniform_real_distribution<double> coin(0, 1);
    for (int g = 0; g <= o_.generations; ++g) {
      std::vector<double> scores = ctx.predict(pop);
      for (size_t i = 0; i < pop.size(); ++i)
        if (!ctx.is_measured(pop[i]))
          found[*ctx.key(pop[i])] = {scores[i], pop[i]};
      if (g == o_.generations)
        break;
      std::vector<Point> next;
      next.reserve(pop.size());
      for (int f = 0; f < families; ++f) {
        const auto first = static_cast<std::ptrdiff_t>(begin[f]);
        const std::vector<double> own(scores.begin() + first,
                                      scores.begin() + static_cast<std::ptrdiff_t>(begin[f + 1]));
        auto parent = [&]() -> const Point& { return pop[begin[f] + roulette(own, ctx.rng)]; };
        for (size_t i = begin[f]; i < begin[f + 1]; ++i) {
          const Point& a = parent();
          if (coin(ctx.rng) < o_.mutation_prob)
            next.push_back(ctx.space.mutate(a, ctx.rng));
          else
            next.push_back(ctx.space.crossover(a, parent(), ctx.rng));
        }
      }
      pop = std::move(next);
    }
    std::vector<std::pair<double, Point>> scored;
    for (auto& [k, v] : found)
      scored.push_back(std::move(v));
    return pick(ctx, std::move(scored), best, n);
  }

private:
  /// A config one decision away from a sketch's best measured one.
  struct Neighbour {
    double score;
    int decision;
    Point point;
  };

  /// Each sketch's best measured config's unmeasured neighbours, scored,
  /// best first; sketches (families) with no measured config have none.
  std::vector<std::vector<Neighbour>>
  neighbourhoods(SearchContext& ctx, const std::vector<std::vector<const MeasuredPoint*>>& best) {
    std::vector<std::vector<Neighbour>> out(best.size());
    std::vector<Point> points;
    std::vector<std::pair<size_t, int>> owner; // family, decision
    for (size_t f = 0; f < best.size(); ++f)
      if (!best[f].empty())
        for (auto& [decision, p] : ctx.space.neighbours(best[f].front()->point))
          if (!ctx.is_measured(p)) {
            owner.emplace_back(f, decision);
            points.push_back(std::move(p));
          }
    std::vector<double> scores = ctx.predict(points);
    for (size_t i = 0; i < points.size(); ++i)
      if (std::isfinite(scores[i]))
        out[owner[i].first].push_back({scores[i], owner[i].second, std::move(points[i])});
    for (auto& n : out)
      std::stable_sort(n.begin(), n.end(),
                       [](const Neighbour& a, const Neighbour& b) { return a.score > b.score; });
    return out;
  }

  /// Takes up to `count` neighbours, each changing the next decision (in
  /// turn from `decision`) that has one `take` accepts (not measured, not
  /// picked yet): the best predicted of those that change it.
  template <class Take>
  static void sweep(const std::vector<Neighbour>& cands, int& decision, int count, Take& take) {
    int decisions = 0;
    for (const Neighbour& c : cands)
      decisions = std::max(decisions, c.decision + 1);
    for (int k = 0, tries = 0; k < count && tries < decisions;
         decision = (decision + 1) % decisions) {
      bool took = false;
      for (const Neighbour& c : cands)
        if (c.decision == decision && take(c.point)) {
          took = true;
          break;
        }
      // Decisions with nothing left to take, all in a row: give up.
      tries = took ? 0 : tries + 1;
      k += took;
    }
  }

  /// The round's picks, in three parts:
  ///  - while the lead is stalled, `local_share` from the neighbourhood of
  ///    the leading sketch's or a contender's best config, one decision at
  ///    a time in turn: the best predicted neighbour that changes tile axis
  ///    i, then j, ... The model, from a few poor samples with a packed
  ///    panel's k block of 128, scores that block low everywhere and never
  ///    proposes it by score alone, however good it is in the best config,
  ///    so that sketch's best is never tuned along that decision;
  ///  - a share for the contenders, the least measured first, each its best
  ///    predicted config; the share grows while the lead is stalled, as the
  ///    model keeps proposing the leading sketch's configs after they stop
  ///    paying, while a sketch behind, faster once tuned, gets none
  ///    (docs/tuning.md);
  ///  - the rest by score, with an epsilon share at random.
  std::vector<Point> pick(SearchContext& ctx, std::vector<std::pair<double, Point>> scored,
                          const std::vector<std::vector<const MeasuredPoint*>>& best, int n) {
    Race race = race_of(ctx);
    std::vector<int> contenders = families_in_race(race, o_.sketch_warmup, o_.sketch_cutoff);
    std::vector<Point> out;
    ProgramSet taken;
    auto take = [&](const Point& p) {
      if (ctx.is_measured(p) || !taken.insert(*ctx.key(p)).second)
        return false;
      out.push_back(p);
      return true;
    };

    // While the lead is stalled, every other round sweeps the leading
    // sketch's neighbourhood, else the next contender's: a whole round's
    // local picks go to one sketch, so that a sweep over its decisions takes
    // a few rounds, not dozens. Not before: while configs keep improving,
    // the model's own picks pay, and scoring the neighbourhoods costs time
    // each round; sweeping from the first round found no better configs
    // (docs/tuning.md).
    const bool stalled = o_.sketch_patience > 0 && race.stalled >= o_.sketch_patience;
    if (stalled) {
      std::vector<std::vector<Neighbour>> near = neighbourhoods(ctx, best);
      const std::int64_t round = sweeps_++;
      int sweeping = race.leader;
      if (!contenders.empty() && (round % 2 == 1 || sweeping < 0))
        sweeping = contenders[static_cast<size_t>(round / 2) % contenders.size()];
      if (sweeping >= 0)
        sweep(near[static_cast<size_t>(sweeping)], next_decision_[sweeping],
              static_cast<int>(std::round(n * o_.local_share)), take);
      for (auto& family : near)
        for (Neighbour& c : family)
          scored.emplace_back(c.score, std::move(c.point));
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });

    const double share =
        stalled ? std::max(o_.sketch_share, o_.sketch_stall_share) : o_.sketch_share;
    const int left_after_local = n - static_cast<int>(out.size());
    const int reserved =
        contenders.empty() ? 0 : static_cast<int>(std::round(left_after_local * share));
    for (int k = 0; k < reserved; ++k) {
      // The least measured contender (picks of this round counted); ties
      // go to the lower index, which is deterministic for a seed.
      int f = *std::min_element(contenders.begin(), contenders.end(),
                                [&](int a, int b) { return race.trials[a] < race.trials[b]; });
      ++race.trials[f];
      for (auto& [score, p] : scored)
        if (std::isfinite(score) && ctx.space.family(p) == f && take(p))
          break;
    }
    const int left = n - static_cast<int>(out.size());
    for (Point& p : pick_best(ctx, std::move(scored), left, o_.eps_greedy, std::move(taken)))
      out.push_back(std::move(p));
    return out;
  }

  StrategyOptions o_;
  std::int64_t sweeps_ = 0;          ///< rounds that swept a neighbourhood
  std::map<int, int> next_decision_; ///< per sketch: the decision its next local pick changes
};

} // namespace

std::unique_ptr<SearchStrategy> make_evolutionary(const StrategyOptions& options) {
  return std::make_unique<EvolutionaryStrategy>(options);
}

} // namespace kiln::search
