#include "buffer_geometry.h"

#include <algorithm>

namespace kiln::model::detail {

BufferGeom geometry(const schedule::Buffer* b, std::size_t dims) {
  BufferGeom g;
  if (b)
    g.elem_bytes = std::max(1, ir::bytes(b->dtype));
  g.shape.assign(dims, kUnknownExtent);
  if (b && b->shape.size() == dims)
    for (std::size_t d = 0; d < dims; ++d)
      g.shape[d] = std::max<std::int64_t>(1, b->shape[d]);
  g.row_stride.assign(dims, 1);
  for (std::size_t d = dims; d-- > 1;)
    g.row_stride[d - 1] = g.row_stride[d] * std::min(g.shape[d], kUnknownExtent);
  return g;
}

} // namespace kiln::model::detail
