// Private to schedule: the lowering pass that applies auto_unroll_max_step.
#ifndef KILN_LIB_SCHEDULE_AUTO_UNROLL_H
#define KILN_LIB_SCHEDULE_AUTO_UNROLL_H

#include "kiln/schedule/loop_nest.h"

#include <cstdint>
#include <unordered_map>

namespace kiln::schedule {

/// The auto_unroll_max_step in force at each loop of a freshly built nest,
/// by node: the largest of its own stage's and of the stages it is computed
/// inside (the pragma covers every loop of a stage's nest, and a stage
/// computed at a loop is part of its consumer's nest). Loops without an
/// entry have none. Valid only for the nest build_nest made it with.
using AutoUnrollSteps = std::unordered_map<const StmtNode*, std::int64_t>;

/// Marks serial loops Unrolled when the statements they execute in all,
/// counting inner loops, are at most the step in force there, and whose
/// expanded code stays under a fixed number of scalar lanes.
Stmt mark_auto_unroll(const Stmt& stmt, const AutoUnrollSteps& steps);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_AUTO_UNROLL_H
