// Private to model: the layout of a buffer as the features see it, dense and
// row-major.
#ifndef KILN_LIB_MODEL_BUFFER_GEOMETRY_H
#define KILN_LIB_MODEL_BUFFER_GEOMETRY_H

#include "kiln/schedule/loop_nest.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::model::detail {

/// The bytes of a cache line.
inline constexpr int kCacheLineBytes = 64;

/// The extent given to a dimension whose extent is not known.
inline constexpr std::int64_t kUnknownExtent = std::int64_t{1} << 40;

struct BufferGeom {
  int elem_bytes = 4;
  std::vector<std::int64_t> shape;      ///< per index dimension; "unknown" is huge
  std::vector<std::int64_t> row_stride; ///< elements per step of each dimension
};

/// The geometry of buffer `b` (nullptr: unknown) indexed with `dims`
/// dimensions. A shape of another rank counts as unknown.
BufferGeom geometry(const schedule::Buffer* b, std::size_t dims);

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_BUFFER_GEOMETRY_H
