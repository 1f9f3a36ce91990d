#include "kiln/search/strategy.h"

#include "strategy_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kiln::search {

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

std::vector<StrategyOptionInfo> strategy_option_list(const StrategyOptions& options) {
  std::vector<StrategyOptionInfo> out;
  for (const OptionField& f : kOptionFields)
    out.push_back(
        {f.name,
         f.real ? fmt::format("{:g}", options.*f.real) : fmt::format("{}", options.*f.integer),
         f.help});
  return out;
}

std::vector<Point> pick_best(SearchContext& ctx, std::vector<std::pair<double, Point>> scored,
                             int n, double eps, ProgramSet taken) {
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  int random_share = static_cast<int>(std::round(n * eps));
  std::vector<Point> out;
  for (auto& [score, p] : scored) {
    if (static_cast<int>(out.size()) >= n - random_share)
      break;
    if (!std::isfinite(score))
      continue;
    std::optional<schedule::ProgramKey> k = ctx.key(p);
    if (!k || ctx.measured_programs.count(*k) || !taken.insert(*k).second)
      continue;
    out.push_back(std::move(p));
  }
  for (Point& p : ctx.random_unmeasured(n - static_cast<int>(out.size()), taken))
    out.push_back(std::move(p));
  return out;
}

std::size_t roulette(const std::vector<double>& scores, std::mt19937_64& rng) {
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

namespace {

class RandomStrategy : public SearchStrategy {
public:
  std::string name() const override { return "random"; }
  bool uses_model() const override { return false; }
  std::vector<Point> propose(SearchContext& ctx, int n) override {
    return ctx.random_unmeasured(n);
  }
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
    return make_evolutionary(options);
  if (name == "annealing")
    return make_annealing(options);
  if (name == "genetic")
    return make_genetic(options);
  if (name == "grid")
    return std::unique_ptr<SearchStrategy>(new GridStrategy());
  return Error("unknown-strategy",
               fmt::format("unknown strategy '{}'; the strategies are evolutionary, annealing, "
                           "genetic, random, grid",
                           name));
}

std::optional<Error> check_strategy_fits(const std::string& name, const SearchSpace& space) {
  if (name == "grid" && !space.size())
    return Error("bad-option",
                 fmt::format("--strategy grid walks a space in order, and the {} space is "
                             "sampled, not enumerated: give --space template, or another "
                             "strategy",
                             space.name()));
  return std::nullopt;
}

} // namespace kiln::search
