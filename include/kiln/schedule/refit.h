// Carrying a schedule to another shape of the same op: the steps of a
// config tuned on one set of extents, with every split's tile sizes fitted
// to the extents of the new DAG (the nearest-shape start,
// record/nearest_shape.h).
#ifndef KILN_SCHEDULE_REFIT_H
#define KILN_SCHEDULE_REFIT_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <vector>

namespace kiln::schedule {

/// Tile sizes (a split's factors, outer to inner) fitted to a loop of
/// `extent`. The tiles were chosen for registers and caches, not for the
/// extent, so they are kept where they fit; a tile larger than the loop is
/// shrunk (the largest outer factor halved first, the innermost, usually
/// the vector lanes, last); and when the whole tile pads the loop by more
/// than an eighth, the outermost factor moves to the value within a factor
/// of two that pads least (a prime extent keeps its tail).
std::vector<std::int64_t> refit_factors(const std::vector<std::int64_t>& factors,
                                        std::int64_t extent);

/// `steps` replayed on `dag` with each split's and rfactor's factors fitted
/// (refit_factors) to the extent of the loop it splits there. An Error when
/// a step does not apply to `dag` (another op, or other stage names).
Expected<std::vector<Step>> refit_steps(const ir::ComputeDAG& dag, const std::vector<Step>& steps);

} // namespace kiln::schedule

#endif // KILN_SCHEDULE_REFIT_H
