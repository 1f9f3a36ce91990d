// Private to schedule: the lowering pass that picks the storage order of the
// kernel's own buffers.
#ifndef KILN_LIB_SCHEDULE_VECTOR_LAYOUT_H
#define KILN_LIB_SCHEDULE_VECTOR_LAYOUT_H

#include "kiln/schedule/loop_nest.h"

namespace kiln::schedule {

/// Stores the dimension a vector loop walks innermost in every buffer the
/// kernel allocates, so its accesses there are consecutive lanes rather
/// than gathers and scatters.
Stmt vector_dims_innermost(const Stmt& stmt);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_VECTOR_LAYOUT_H
