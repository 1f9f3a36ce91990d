#include "strategy_util.h"

#include <algorithm>

namespace kiln::search {

namespace {

class GeneticStrategy : public SearchStrategy {
public:
  explicit GeneticStrategy(const StrategyOptions& o) : o_(o) {}
  std::string name() const override { return "genetic"; }
  bool uses_model() const override { return false; }

  std::vector<Point> propose(SearchContext& ctx, int n) override {
    std::vector<MeasuredPoint> parents;
    for (const MeasuredPoint& m : ctx.measured)
      if (m.throughput > 0)
        parents.push_back(m);
    if (parents.size() < 2)
      return ctx.random_unmeasured(n);
    std::sort(parents.begin(), parents.end(),
              [](const auto& a, const auto& b) { return a.throughput > b.throughput; });
    std::vector<double> fitness;
    for (const MeasuredPoint& m : parents)
      fitness.push_back(m.throughput);
    std::vector<Point> out;
    ProgramSet taken;
    std::uniform_real_distribution<double> coin(0, 1);
    int elites = std::min<int>(o_.ga_elites, static_cast<int>(parents.size()));
    for (int attempt = 0; static_cast<int>(out.size()) < n && attempt < 50 * n; ++attempt) {
      // Elites always breed; the rest by fitness.
      size_t a = attempt % 2 == 0 && elites > 0 ? static_cast<size_t>(attempt / 2 % elites)
                                                : roulette(fitness, ctx.rng);
      size_t b = roulette(fitness, ctx.rng);
      Point child = ctx.space.crossover(parents[a].point, parents[b].point, ctx.rng);
      if (coin(ctx.rng) < o_.ga_mutation_prob || ctx.key(child) == ctx.key(parents[a].point))
        child = ctx.space.mutate(child, ctx.rng);
      if (ctx.is_measured(child) || !taken.insert(*ctx.key(child)).second)
        continue;
      out.push_back(std::move(child));
    }
    for (Point& p : ctx.random_unmeasured(n - static_cast<int>(out.size()), taken))
      out.push_back(std::move(p));
    return out;
  }

private:
  StrategyOptions o_;
};

} // namespace

std::unique_ptr<SearchStrategy> make_genetic(const StrategyOptions& options) {
  return std::make_unique<GeneticStrategy>(options);
}

} // namespace kiln::search
