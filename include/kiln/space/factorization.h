// Tile sizes of loop extents, cached: sampling tile sizes draws uniformly
// from these lists.
//
// A tiling of an extent into `parts` levels is written outermost first, and
// its outer factor is the number of outer iterations: ceil(extent / P) for
// the product P of the inner factors. An exact factorization has no tail
// (outer × P == extent); any other tiling leaves a tail that the schedule
// guards and the code generator peels off the hot loop (SplitStep).
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

/// The tilings of `extent` a search draws from: the exact factorizations
/// first (as factorizations() gives them), then tilings with a tail, each
/// once. The tailed ones are the exact factorizations of the extent rounded
/// up to a multiple m of 2, 4, …, 64, their outer factor recomputed, where
/// rounding up adds at most an eighth of the extent: the tail is at most
/// one block and a prime such as 97 or 1000's vector axis get tiles. When
/// `vector_lanes` > 1 the axis is vectorized: its tailed tilings keep the
/// innermost factor a whole number of vectors, and an extent that is not a
/// whole number of vectors may also be rounded up to any multiple of 1 to 4
/// vectors (at most `max_innermost`) however much that adds, so every
/// register tile width fits (101 in tiles of 48 lanes) and 10 classes take
/// one masked vector. factorizations()' one-loop fallback is listed only
/// when there is no tailed tiling either. Cached and shared as
/// factorizations() is.
const std::vector<std::vector<std::int64_t>>& tilings(std::int64_t extent, int parts,
                                                      std::int64_t max_innermost,
                                                      std::int64_t innermost_multiple,
                                                      std::int64_t vector_lanes);

/// Whether `factors` tile `extent`: every factor positive, the outer one
/// ceil(extent / product of the others), and no product past 64 bits.
bool is_tiling(std::int64_t extent, const std::vector<std::int64_t>& factors);

} // namespace kiln::space

#endif
