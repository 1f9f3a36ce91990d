// Private to schedule: bound inference, the region of a producer that one
// iteration of a consumer's loop reads (what compute_at computes there).
#ifndef KILN_LIB_SCHEDULE_BOUND_INFERENCE_H
#define KILN_LIB_SCHEDULE_BOUND_INFERENCE_H

#include "kiln/ir/compute_dag.h"
#include "kiln/ir/linear_form.h"
#include "kiln/schedule/state.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::schedule {

/// Where a stage's values live in its buffer: element `axis` of the stage is
/// at buffer index `axis - base` (base is 0 for stages at the root; for a
/// stage computed at a loop it is where the region read by one iteration of
/// that loop starts).
struct Region {
  std::vector<ir::Expr> base;
  std::vector<std::int64_t> extent;
};

/// The whole of a stage: base 0 and the extent of every axis.
Region full_region(const ir::Stage& stage);

/// An expression split into an affine part over some variables plus a rest
/// that does not use them.
struct Decomposed {
  ir::LinearForm inner;
  ir::Expr rest;
};

/// `e` as an affine form over `vars` plus a rest without them; nullopt when
/// the variables appear otherwise (under a division, a min, ...).
std::optional<Decomposed> decompose(const ir::Expr& e, const std::set<std::string>& vars);

/// The region of `producer` that one iteration of loop `at` of its consumer
/// reads, from `element`, the consumer's value at one point (its loads of
/// the producer). Each index is affine in the consumer's loops inside `at`
/// (named `prefix` + iterator, ranging over `extent`) plus a rest fixed for
/// that iteration. When reads disagree or are not affine, the whole stage;
/// a dimension whose span covers the stage's extent is computed whole.
Region infer_region(const ir::Stage& producer, const ir::Expr& element, const StageState& consumer,
                    const std::string& prefix, const std::string& at,
                    const std::map<std::string, std::int64_t>& extent);

/// `e` with the base of each attached stage's region subtracted from the
/// indices of its loads, so they index the stage's (region-sized) buffer.
ir::Expr rebase_loads(const ir::Expr& e, const std::map<std::string, Region>& regions);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_BOUND_INFERENCE_H
