// The little statistics the report needs: rank correlation and an even,
// deterministic subset of many points.
#ifndef KILN_REPORT_STATS_H
#define KILN_REPORT_STATS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::report {

/// Ranks from 1, ties sharing their average rank.
std::vector<double> ranks(const std::vector<double>& values);

/// Spearman's rank correlation (Pearson's on average ranks); NaN with fewer
/// than two pairs or when either side is constant.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

/// `k` indices of [0, n) spread evenly, in order, always with the first and
/// the last; all of them when n <= k. The same n and k always pick the same
/// indices, so a report of the same log is the same page.
std::vector<std::size_t> spread(std::size_t n, std::size_t k);

/// A deterministic value in [0, 1) for `i` (jitter without a random
/// generator's state).
double unit_hash(std::uint64_t i);

} // namespace kiln::report

#endif
