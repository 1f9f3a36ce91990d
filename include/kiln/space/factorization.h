// Exact factorizations of loop extents into tile sizes, cached: sampling tile
// sizes draws uniformly from these lists.
#ifndef KILN_SPACE_FACTORIZATION_H
#define KILN_SPACE_FACTORIZATION_H

#include <cstdint>
#include <vector>

namespace kiln::space {

/// Every way to write `extent` as an ordered product of `parts` factors,
/// outermost first, whose innermost factor is at most `max_innermost` and a
/// multiple of `innermost_multiple`. The result is cached per argument list
/// and shared; it is never empty (when no factorization qualifies, the list
/// is extent × 1 × … × 1).
const std::vector<std::vector<std::int64_t>>& factorizations(std::int64_t extent, int parts,
                                                             std::int64_t max_innermost,
                                                             std::int64_t innermost_multiple = 1);

} // namespace kiln::space

#endif
