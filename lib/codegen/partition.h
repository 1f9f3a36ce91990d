// Private to codegen: loop partitioning of split tails and padding before
// emission.
#ifndef KILN_LIB_CODEGEN_PARTITION_H
#define KILN_LIB_CODEGEN_PARTITION_H

#include "kiln/schedule/loop_nest.h"

namespace kiln::codegen {

/// Splits loops so that conditions on the loop's position hold in a main
/// part and are tested only at its ends. A condition is a comparison of
/// integers, or a conjunction of them, in the guard of an if (a split tail:
/// `x.0 * 16 + x.1 < 56`) or of a select (inlined padding: `x + rx >= 1 &&
/// x + rx < 57`). A loop over v whose body holds a comparison true for v in
/// [0, p) (or [p, extent)) whatever the other loops' values becomes a loop
/// over [0, p) and one over [p, extent); comparisons the loops' ranges then
/// decide are removed, with the if or the select side they leave. The main
/// part of a vector loop then has no lane-dependent condition (plain loads
/// and stores the optimiser keeps in registers), and the remainder of a
/// vector loop is usually a narrower unguarded vector loop.
///
/// Parallel loops are not split (each part would start the thread pool
/// once). A vector loop is split only at the end of an if's true prefix (a
/// tail): splitting its lanes at a padding column would leave a scalar lane
/// and an odd-width vector where one masked vector is cheaper.
schedule::Stmt partition_tails(const schedule::Stmt& body);

} // namespace kiln::codegen

#endif
