// What a search space needs to know of the machine it tunes for, and how to
// read it off a Target.
#ifndef KILN_SPACE_SPACE_PARAMS_H
#define KILN_SPACE_SPACE_PARAMS_H

#include "kiln/support/target.h"

#include <cstdint>

namespace kiln::space {

/// What the space needs to know of the machine.
struct SpaceParams {
  int vector_lanes = 16; ///< longest vector loop (host width / element size)
  int cores = 1;
  std::int64_t max_innermost_factor = 64; ///< Ansor's max_innermost_split_factor
  /// Packed sketch: longest reduction block of one packed panel. It is a
  /// cache block (OpenBLAS's sgemm kc is 256-384), not a register tile, so
  /// max_innermost_factor would cap it four times too short.
  std::int64_t max_pack_depth = 512;
  /// Whether tile sizes that do not divide their extent are drawn too
  /// (tilings()): without them a prime or odd extent can be neither tiled
  /// nor vectorized in whole vectors.
  bool tail_tiles = true;
};

/// The params of a machine: the f32 lanes of its vector registers and its
/// cores; the tile limits keep their defaults.
SpaceParams space_params(const Target& target);

} // namespace kiln::space

#endif // KILN_SPACE_SPACE_PARAMS_H
