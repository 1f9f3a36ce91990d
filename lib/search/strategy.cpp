#include "kiln/search/strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace kiln::search {

std::string point_key(const Point& p) {
  std::string k;
  for (std::int64_t x : p)
    k += std::to_string(x) + ",";
  return k;
}

namespace {
struct OptionField {
  const char* name;
  double StrategyOptions::*real = nullptr;
  int StrategyOptions::*integer = nullptr;
  const char* help = "";
};
const OptionField kOptionFields[] = {
    {"eps_greedy", &StrategyOptions::eps_greedy, nullptr,
     "share of each round's picks drawn at random (model-guided strategies)"},
    {"population", nullptr, &StrategyOptions::population, "evolutionary: population size"},
    {"generations", nullptr, &StrategyOptions::generations,
     "evolutionary: generations evolved per round"},
    {"mutation_prob", &StrategyOptions::mutation_prob, nullptr,
     "evolutionary: chance a child is a mutation (else a crossover)"},
    {"init_measured_ratio", &StrategyOptions::init_measured_ratio, nullptr,
     "evolutionary: share of the initial population taken from the best measured"},
    {"sketch_share", &StrategyOptions::sketch_share, nullptr,
     "evolutionary: share of each round's picks kept for the sketches behind the leading one"},
    {"sketch_warmup", nullptr, &StrategyOptions::sketch_warmup,
     "evolutionary: trials a sketch stays in the race for, however slow"},
    {"sketch_cutoff", &StrategyOptions::sketch_cutoff, nullptr,
     "evolutionary: after its warm-up a sketch stays in the race while its best is this share "
     "of the best"},
    {"local_share", &StrategyOptions::local_share, nullptr,
     "evolutionary: share of each round's picks, while the lead is stalled, from the "
     "neighbourhoods of the sketches' best configs, one decision at a time"},
    {"sketch_patience", nullptr, &StrategyOptions::sketch_patience,
     "evolutionary: trials without a better config after which the lead counts as stalled "
     "(0: never)"},
    {"sketch_stall_share", &StrategyOptions::sketch_stall_share, nullptr,
     "evolutionary: share of each round's picks kept for the sketches behind a stalled lead"},
    {"sa_chains", nullptr, &StrategyOptions::sa_chains, "annealing: parallel chains"},
    {"sa_steps", nullptr, &StrategyOptions::sa_steps, "annealing: steps per round"},
    {"sa_temperature", &StrategyOptions::sa_temperature, nullptr,
     "annealing: starting temperature (falls linearly to 0)"},
    {"sa_early_stop", nullptr, &StrategyOptions::sa_early_stop,
     "annealing: stop a round after this many steps without a new best set"},
    {"ga_elites", nullptr, &StrategyOptions::ga_elites,
     "genetic: best measured configs always kept as parents"},
    {"ga_mutation_prob", &StrategyOptions::ga_mutation_prob, nullptr,
     "genetic: chance of a mutation per child"},
};
} // namespace

std::optional<Error> set_strategy_option(StrategyOptions& options, const std::string& name,
                                         const std::string& value) {
  for (const OptionField& f : kOptionFields) {
    if (name != f.name)
      continue;
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || v < 0)
      return Error("bad-option", fmt::format("strategy option {} needs a non-negative number, "
                                             "got '{}'",
                                             name, value));
    if (f.real)
      options.*f.real = v;
    else
      options.*f.integer = static_cast<int>(v);
    return std::nullopt;
  }
  std::string known;
  for (const OptionField& f : kOptionFields)
    known += (known.empty() ? "" : ", ") + std::string(f.name);
  return Error("bad-option",
               fmt::format("unknown strategy option '{}'; the options are {}", name, known));
}

std::string describe_strategy_options(const StrategyOptions& options) {
  std::string out;
  for (const OptionField& f : kOptionFields)
    out += fmt::format("{:<20} = {:<6}  {}\n", f.name,
                       f.real ? fmt::format("{:g}", options.*f.real)
                              : fmt::format("{}", options.*f.integer),
                       f.help);
  return out;
}

const model::ProgramFeatures& SearchContext::features(const Point& p) {
  std::string key = point_key(p);
  auto it = feature_cache_.find(key);
  if (it != feature_cache_.end())
    return it->second;
  if (feature_cache_.size() > 200000)
    feature_cache_.clear();
  return feature_cache_[key] = space.features(p);
}

unsigned SearchContext::feature_threads() {
  return std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
}

std::vector<double> SearchContext::predict(const std::vector<Point>& points) {
  // Lowering for features dominates: fill the cache on two threads.
  std::vector<const Point*> missing;
  std::unordered_set<std::string> seen;
  for (const Point& p : points) {
    std::string key = point_key(p);
    if (!feature_cache_.count(key) && seen.insert(key).second)
      missing.push_back(&p);
  }
  // Each thread takes chunks of points, which SearchSpace::features runs
  // stage by stage (faster than one point at a time).
  constexpr size_t kChunk = 64;
  std::vector<model::ProgramFeatures> computed(missing.size());
  unsigned threads = feature_threads();
  auto work = [&](unsigned t, unsigned stride) {
    for (size_t begin = t * kChunk; begin < missing.size(); begin += stride * kChunk) {
      const size_t n = std::min(kChunk, missing.size() - begin);
      std::vector<model::ProgramFeatures> f =
          space.features(std::span<const Point* const>(missing.data() + begin, n));
      std::move(f.begin(), f.end(), computed.begin() + static_cast<std::ptrdiff_t>(begin));
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && missing.size() > kChunk; ++t)
    pool.emplace_back(work, t, threads);
  work(0, static_cast<unsigned>(pool.size()) + 1);
  for (std::thread& t : pool)
    t.join();
  for (size_t i = 0; i < missing.size(); ++i)
    feature_cache_[point_key(*missing[i])] = std::move(computed[i]);

  // Pointers into the cache: every point is in it now, so features() only
  // finds (it clears the cache only on a miss).
  std::vector<const model::ProgramFeatures*> batch;
  std::vector<size_t> index;
  std::vector<double> scores(points.size(), -std::numeric_limits<double>::infinity());
  for (size_t i = 0; i < points.size(); ++i) {
    const model::ProgramFeatures& f = features(points[i]);
    if (f.rows.empty())
      continue;
    batch.push_back(&f);
    index.push_back(i);
  }
  predictions += static_cast<std::int64_t>(batch.size());
  std::vector<double> s = model.predict(batch);
  for (size_t i = 0; i < index.size(); ++i)
    scores[index[i]] = s[i];
  return scores;
}

std::vector<Point> SearchContext::random_unmeasured(int n,
                                                    const std::unordered_set<std::string>& exclude,
                                                    int family) {
  std::vector<Point> out;
  std::unordered_set<std::string> taken = exclude;
  for (int attempt = 0; static_cast<int>(out.size()) < n && attempt < n * 50 + 100; ++attempt) {
    Point p = family >= 0 ? space.sample_family(family, rng) : space.sample(rng);
    std::string key = point_key(p);
    if (is_measured(p) || !taken.insert(key).second)
      continue;
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

/// The best `n` unmeasured points by score, then an epsilon share of random
/// ones (exploration); none of them in `taken` (picked already).
std::vector<Point> pick_best(SearchContext& ctx, std::vector<std::pair<double, Point>> scored,
                             int n, double eps, std::unordered_set<std::string> taken = {}) {
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  int random_share = static_cast<int>(std::round(n * eps));
  std::vector<Point> out;
  for (auto& [score, p] : scored) {
    if (static_cast<int>(out.size()) >= n - random_share)
      break;
    if (!std::isfinite(score) || ctx.is_measured(p) || !taken.insert(point_key(p)).second)
      continue;
    out.push_back(std::move(p));
  }
  for (Point& p : ctx.random_unmeasured(n - static_cast<int>(out.size()), taken))
    out.push_back(std::move(p));
  return out;
}

class RandomStrategy : public SearchStrategy {
public:
  std::string name() const override { return "random"; }
  bool uses_model() const override { return false; }
  std::vector<Point> propose(SearchContext& ctx, int n) override {
    return ctx.random_unmeasured(n);
  }
};

/// Index of a parent chosen in proportion to its (shifted) score.
size_t roulette(const std::vector<double>& scores, std::mt19937_64& rng) {
  double lo = std::numeric_limits<double>::infinity(), total = 0;
  for (double s : scores)
    if (std::isfinite(s))
      lo = std::min(lo, s);
  std::vector<double> w(scores.size(), 0);
  for (size_t i = 0; i < scores.size(); ++i)
    if (std::isfinite(scores[i])) {
      w[i] = scores[i] - lo + 1e-6;
      total += w[i];
    }
  if (total <= 0)
    return std::uniform_int_distribution<size_t>(0, scores.size() - 1)(rng);
  double r = std::uniform_real_distribution<double>(0, total)(rng);
  for (size_t i = 0; i < w.size(); ++i) {
    r -= w[i];
    if (r <= 0)
      return i;
  }
  return w.size() - 1;
}

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

    std::map<std::string, std::pair<double, Point>> found;
    std::uniform_real_distribution<double> coin(0, 1);
    for (int g = 0; g <= o_.generations; ++g) {
      std::vector<double> scores = ctx.predict(pop);
      for (size_t i = 0; i < pop.size(); ++i)
        if (!ctx.is_measured(pop[i]))
          found[point_key(pop[i])] = {scores[i], pop[i]};
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
  ///    proposes it by score alone, however good it is in the best config
  ///    (matmul 1024³: none of 600 trials tried 128 or 256 near the packed
  ///    sketch's best, and it stayed 15% behind);
  ///  - a share for the contenders, the least measured first, each its best
  ///    predicted config; the share grows while the lead is stalled, as the
  ///    model keeps proposing the leading sketch's configs after they stop
  ///    paying (270 trials without a better one while the packed sketch,
  ///    8% faster once tuned, had 63; docs/tuning.md);
  ///  - the rest by score, with an epsilon share at random.
  std::vector<Point> pick(SearchContext& ctx, std::vector<std::pair<double, Point>> scored,
                          const std::vector<std::vector<const MeasuredPoint*>>& best, int n) {
    Race race = race_of(ctx);
    std::vector<int> contenders = families_in_race(race, o_.sketch_warmup, o_.sketch_cutoff);
    std::vector<Point> out;
    std::unordered_set<std::string> taken;
    auto take = [&](const Point& p) {
      if (ctx.is_measured(p) || !taken.insert(point_key(p)).second)
        return false;
      out.push_back(p);
      return true;
    };

    // While the lead is stalled, every other round sweeps the leading
    // sketch's neighbourhood, else the next contender's: a whole round's
    // local picks go to one sketch, so that a sweep over its decisions takes
    // a few rounds, not dozens. Not before: while configs keep improving,
    // the model's own picks pay, and scoring the neighbourhoods costs time
    // each round; sweeping from the first round was no better (matmul
    // 1024³, seeds 5-8: 277 / 300 GFLOPS on average after 200 / 600
    // trials, against 279 / 302; docs/tuning.md).
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
    std::map<std::string, std::pair<double, Point>> top;
    auto remember = [&](const Point& p, double s) {
      if (!ctx.is_measured(p) && std::isfinite(s))
        top[point_key(p)] = {s, p};
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
    return pick_best(ctx, std::move(scored), n, o_.eps_greedy);
  }

private:
  StrategyOptions o_;
  std::vector<Point> chains_;
};

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
    std::unordered_set<std::string> taken;
    std::uniform_real_distribution<double> coin(0, 1);
    int elites = std::min<int>(o_.ga_elites, static_cast<int>(parents.size()));
    for (int attempt = 0; static_cast<int>(out.size()) < n && attempt < 50 * n; ++attempt) {
      // Elites always breed; the rest by fitness.
      size_t a = attempt % 2 == 0 && elites > 0 ? static_cast<size_t>(attempt / 2 % elites)
                                                : roulette(fitness, ctx.rng);
      size_t b = roulette(fitness, ctx.rng);
      Point child = ctx.space.crossover(parents[a].point, parents[b].point, ctx.rng);
      if (coin(ctx.rng) < o_.ga_mutation_prob || point_key(child) == point_key(parents[a].point))
        child = ctx.space.mutate(child, ctx.rng);
      if (ctx.is_measured(child) || !taken.insert(point_key(child)).second)
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

class GridStrategy : public SearchStrategy {
public:
  std::string name() const override { return "grid"; }
  bool uses_model() const override { return false; }
  std::vector<Point> propose(SearchContext& ctx, int n) override {
    std::vector<Point> out;
    auto size = ctx.space.size();
    while (size && next_ < *size && static_cast<int>(out.size()) < n) {
      Point p = ctx.space.at(next_++);
      if (!ctx.is_measured(p))
        out.push_back(std::move(p));
    }
    return out;
  }

private:
  std::uint64_t next_ = 0;
};

} // namespace

Expected<std::unique_ptr<SearchStrategy>> make_strategy(const std::string& name,
                                                        const StrategyOptions& options) {
  if (name == "random")
    return std::unique_ptr<SearchStrategy>(new RandomStrategy());
  if (name == "evolutionary")
    return std::unique_ptr<SearchStrategy>(new EvolutionaryStrategy(options));
  if (name == "annealing")
    return std::unique_ptr<SearchStrategy>(new AnnealingStrategy(options));
  if (name == "genetic")
    return std::unique_ptr<SearchStrategy>(new GeneticStrategy(options));
  if (name == "grid")
    return std::unique_ptr<SearchStrategy>(new GridStrategy());
  return Error("unknown-strategy",
               fmt::format("unknown strategy '{}'; the strategies are evolutionary, annealing, "
                           "genetic, random, grid",
                           name));
}

} // namespace kiln::search
