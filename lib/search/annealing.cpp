#include "strategy_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace kiln::search {

namespace {

class AnnealingStrategy : public SearchStrategy {
public:
  explicit AnnealingStrategy(const StrategyOptions& o) : o_(o) {}
  std::string name() const override { return "annealing"; }
  bool uses_model() const override { return true; }

  std::vector<Point> propose(SearchContext& ctx, int n) override {
    if (!ctx.model.trained())
      return ctx.random_unmeasured(n);
    // Chains persist from round to round; new ones start at random points.
    while (static_cast<int>(chains_.size()) < o_.sa_chains)
      chains_.push_back(ctx.space.sample(ctx.rng));
    std::vector<double> score = ctx.predict(chains_);
    std::map<schedule::ProgramKey, std::pair<double, Point>> top;
    auto remember = [&](const Point& p, double s) {
      if (!ctx.is_measured(p) && std::isfinite(s))
        top[*ctx.key(p)] = {s, p};
    };
    for (size_t c = 0; c < chains_.size(); ++c)
      remember(chains_[c], score[c]);
    std::uniform_real_distribution<double> coin(0, 1);
    int unchanged = 0;
    double best_seen = -std::numeric_limits<double>::infinity();
    for (int step = 0; step < o_.sa_steps && unchanged < o_.sa_early_stop; ++step) {
      double t = o_.sa_temperature * (1.0 - static_cast<double>(step) / o_.sa_steps);
      std::vector<Point> moved;
      for (const Point& p : chains_)
        moved.push_back(ctx.space.mutate(p, ctx.rng));
      std::vector<double> moved_score = ctx.predict(moved);
      double round_best = best_seen;
      for (size_t c = 0; c < chains_.size(); ++c) {
        remember(moved[c], moved_score[c]);
        double delta = moved_score[c] - score[c];
        if (!std::isfinite(moved_score[c]))
          continue;
        if (!std::isfinite(score[c]) ||
            coin(ctx.rng) < std::exp(std::min(delta / (t + 1e-5), 1.0))) {
          chains_[c] = std::move(moved[c]);
          score[c] = moved_score[c];
        }
        round_best = std::max(round_best, score[c]);
      }
      unchanged = round_best > best_seen ? 0 : unchanged + 1;
      best_seen = round_best;
    }
    std::vector<std::pair<double, Point>> scored;
    for (auto& [k, v] : top)
      scored.push_back(std::move(v));
    return pick_best(ctx, std::move(scored), n, o_.eps_greedy, {});
  }

private:
  StrategyOptions o_;
  std::vector<Point> chains_;
};

} // namespace

std::unique_ptr<SearchStrategy> make_annealing(const StrategyOptions& options) {
  return std::make_unique<AnnealingStrategy>(options);
}

} // namespace kiln::search
