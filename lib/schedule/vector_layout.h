// Private to schedule: the lowering pass that picks the storage order of the
// kernel's own buffers.
#ifndef KILN_LIB_SCHEDULE_VECTOR_LAYOUT_H
#define KILN_LIB_SCHEDULE_VECTOR_LAYOUT_H

#include "kiln/schedule/loop_nest.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::schedule {

/// The storage order chosen for the kernel's own buffers: buffer → the
/// dimension that goes last (buffers already right are not listed).
class VectorLayout {
public:
  /// Decides from the vector loops of every nest (the kernel and its
  /// prepack function), for the buffers they allocate and the packed
  /// buffers the prepack function passes to the kernel.
  VectorLayout(const std::vector<Stmt>& nests, const std::vector<Buffer>& packed);

  Stmt apply(const Stmt& stmt) const;
  Buffer apply(Buffer buffer) const;

private:
  std::map<std::string, size_t> moved_;
};

/// Stores the dimension a vector loop walks innermost in every buffer the
/// kernel allocates, so its accesses there are consecutive lanes rather
/// than gathers and scatters.
Stmt vector_dims_innermost(const Stmt& stmt);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_VECTOR_LAYOUT_H
