// Private to search: what several strategies share.
#ifndef KILN_LIB_SEARCH_STRATEGY_UTIL_H
#define KILN_LIB_SEARCH_STRATEGY_UTIL_H

#include "kiln/search/strategy.h"

#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace kiln::search {

/// The best `n` unmeasured points by score, then an epsilon share of random
/// ones (exploration); none of their programs in `taken` (picked already).
std::vector<Point> pick_best(SearchContext& ctx, std::vector<std::pair<double, Point>> scored,
                             int n, double eps, ProgramSet taken);

/// Index of a parent chosen in proportion to its (shifted) score.
std::size_t roulette(const std::vector<double>& scores, std::mt19937_64& rng);

std::unique_ptr<SearchStrategy> make_evolutionary(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_annealing(const StrategyOptions& options);
std::unique_ptr<SearchStrategy> make_genetic(const StrategyOptions& options);

} // namespace kiln::search

#endif // KILN_LIB_SEARCH_STRATEGY_UTIL_H
