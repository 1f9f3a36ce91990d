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

/// A consumer's value at one point of one iteration of a loop: `element`,
/// over the variables `inner` that vary within that iteration (with their
/// extents); any other variable is fixed for the iteration.
struct Reads {
  ir::Expr element;
  std::map<std::string, std::int64_t> inner;
};

/// The reads of the consumer whose loop `at` a stage is computed at: its
/// value `element` at one point, in its loops inside `at` (named `prefix`
/// + iterator, ranging over `extent`).
Reads consumer_reads(const ir::Expr& element, const StageState& consumer, const std::string& prefix,
                     const std::string& at, const std::map<std::string, std::int64_t>& extent);

/// The reads of a stage computed at the same loop (a sibling): its value
/// (`body`, inlined stages substituted; a reduction's terms over all of its
/// reduction axes) at each point of its region.
Reads sibling_reads(const ir::Stage& sibling, const ir::Expr& body, const Region& region);

/// The region of `producer` that one iteration of a loop reads, from every
/// consumer's loads of it there. Each index is affine in the variables
/// that vary within the iteration plus a rest fixed for it. When reads
/// disagree or are not affine, the whole stage; a dimension whose span
/// covers the stage's extent is computed whole.
Region infer_region(const ir::Stage& producer, const std::vector<Reads>& reads);

/// `e` with the base of each attached stage's region subtracted from the
/// indices of its loads, so they index the stage's (region-sized) buffer.
ir::Expr rebase_loads(const ir::Expr& e, const std::map<std::string, Region>& regions);

} // namespace kiln::schedule

#endif // KILN_LIB_SCHEDULE_BOUND_INFERENCE_H
