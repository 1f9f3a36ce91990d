// Private to codegen: loop partitioning of split tails before emission.
#ifndef KILN_LIB_CODEGEN_PARTITION_H
#define KILN_LIB_CODEGEN_PARTITION_H

#include "kiln/schedule/loop_nest.h"

namespace kiln::codegen {

/// Splits loops so that the guards of split tails (`x.0 * 16 + x.1 < 56`)
/// hold in a main part and are tested only in the remainder: a loop over v
/// whose body holds a guard true for v in [0, p) whatever the other loops'
/// values becomes a loop over [0, p) without the guard and a loop over
/// [p, extent) with it. Guards decided by the loops' ranges are removed.
/// The main part of a vector loop then has no lane-dependent guard (plain
/// loads and stores the optimiser keeps in registers) and the remainder of
/// a vector loop is usually a narrower unguarded vector loop. Parallel loops
/// are not split (each part would start the thread pool once).
schedule::Stmt partition_tails(const schedule::Stmt& body);

} // namespace kiln::codegen

#endif
