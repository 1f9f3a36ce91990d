// Private to search: the short lists of the modes that measure little or
// nothing (offline, hybrid): the configs a strategy proposes, scored by the
// model, and the few of them that get measured.
#ifndef KILN_LIB_SEARCH_SHORT_LIST_H
#define KILN_LIB_SEARCH_SHORT_LIST_H

#include "kiln/search/search_context.h"
#include "kiln/search/search_space.h"
#include "kiln/search/strategy.h"
#include "kiln/support/stopwatch.h"

#include <cstddef>
#include <utility>
#include <vector>

namespace kiln::search {

/// Configs with the model's score.
using ScoredPoints = std::vector<std::pair<double, Point>>;

/// Scores the configs the strategy proposes over `rounds` rounds of
/// `per_round`, without measuring, until `seconds` (0: no limit) have passed
/// on `clock`; returns them best first.
ScoredPoints shortlist(SearchStrategy& strategy, SearchContext& ctx, int rounds, int per_round,
                       double seconds, const Stopwatch& clock);

/// The `budget` configs of `scored` (best first) to measure: the best of
/// each family (a sketch) in the order of their scores, up to half the
/// budget, then the best of the rest. A model trained elsewhere can rank a
/// whole family low that is the fastest here (one whose structure its data
/// never held), and a short list taken by score alone would then hold one
/// family only. The list's first config is always the best scored.
ScoredPoints cover_families(const ScoredPoints& scored, std::size_t budget,
                            const SearchSpace& space);

} // namespace kiln::search

#endif // KILN_LIB_SEARCH_SHORT_LIST_H
