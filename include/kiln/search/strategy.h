// Search strategies: each proposes the next configs to measure. All share
// one interface; the tuner (tuner.h) runs the rounds.
//
//  - random: uniform samples of the space;
//  - evolutionary (Ansor): a population of samples and the best measured
//    configs, evolved for some generations by mutation and crossover with
//    parents chosen in proportion to the cost model's score; the best
//    predicted unmeasured configs are picked, plus an epsilon share of
//    random ones. Unlike Ansor, each family of the space (a sketch) evolves
//    its own share of the population, and a share of each round's picks
//    goes to the sketches behind the leading one while they are in the
//    race: without it one sketch takes almost every trial, because the
//    model scores another sketch's poorly tiled early configs low and
//    roulette selection then drops their children (docs/tuning.md); and
//    a share sweeps the neighbourhoods of the best configs one decision at
//    a time, because the model never proposes a value it learnt from a few
//    poor samples to score low;
//  - annealing (AutoTVM): persistent chains walk the space by mutation,
//    accepting by the Metropolis rule on model scores while the temperature
//    falls, stopping early when the best set stops changing;
//  - genetic (AutoTVM GA): no model; parents chosen by measured fitness,
//    elitism, crossover and mutation;
//  - grid: every point of an enumerable (template) space in order.
#ifndef KILN_SEARCH_STRATEGY_H
#define KILN_SEARCH_STRATEGY_H

#include "kiln/search/search_context.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::search {

/// Every hyperparameter of every strategy, with its default.
struct StrategyOptions {
  double eps_greedy = 0.05;         ///< share of random picks in a round
  int population = 512;             ///< evolutionary: population size
  int generations = 3;              ///< evolutionary: generations per round
  double mutation_prob = 0.85;      ///< evolutionary: mutation (else crossover)
  double init_measured_ratio = 0.2; ///< evolutionary: share of the best measured in the population
  double sketch_share = 0.25;       ///< evolutionary: picks kept for the sketches behind the lead
  int sketch_warmup = 32;           ///< evolutionary: trials every sketch gets a share of
  double sketch_cutoff = 0.5;       ///< evolutionary: share of the best a sketch must keep
  double local_share = 0.25;        ///< evolutionary: picks near each sketch's best
  int sketch_patience = 48;         ///< evolutionary: trials without a better config = stalled
  double sketch_stall_share = 0.5;  ///< evolutionary: picks kept behind a stalled lead
  int sa_chains = 64;               ///< annealing: parallel chains
  int sa_steps = 100;               ///< annealing: steps per round
  double sa_temperature = 1.0;      ///< annealing: starting temperature (falls to 0)
  int sa_early_stop = 30;           ///< annealing: steps without a new best set
  int ga_elites = 3;                ///< genetic: best measured always kept as parents
  double ga_mutation_prob = 0.1;    ///< genetic: mutation per child
};

/// Sets one option by name ("population", "eps_greedy", …); an Error names
/// the known ones.
std::optional<Error> set_strategy_option(StrategyOptions& options, const std::string& name,
                                         const std::string& value);
/// One option: its name, its value in `options` as text, what it does.
struct StrategyOptionInfo {
  std::string name, value, help;
};
/// Every option, in a fixed order.
std::vector<StrategyOptionInfo> strategy_option_list(const StrategyOptions& options);

class SearchStrategy {
public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  virtual bool uses_model() const = 0;
  /// Up to `n` distinct unmeasured points to measure next.
  virtual std::vector<Point> propose(SearchContext& ctx, int n) = 0;
};

/// By name: random, evolutionary, annealing, genetic, grid. An Error lists
/// the names.
Expected<std::unique_ptr<SearchStrategy>> make_strategy(const std::string& name,
                                                        const StrategyOptions& options);

/// An Error when the strategy cannot search the space: grid walks a space
/// in order, so it needs one of known size (the template space; the sketch
/// space is sampled, not enumerated).
std::optional<Error> check_strategy_fits(const std::string& name, const SearchSpace& space);

} // namespace kiln::search

#endif
