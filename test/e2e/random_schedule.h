// Test-only: random valid schedules for the property test.
//
// A schedule is grown one proposal at a time from the naive State. Each
// proposal is a step that makes sense at that point (a split of a loop that
// exists with factors 1..extent+2, a fuse of adjacent loops of one kind, a
// compute_at of a stage with a single consumer into one of its loops or of
// one with several at the loop where the others are computed, a
// cache_write before any loop step on the stage, a cache_read often followed
// by a compute_at into its reader, …), except for a share of "wild"
// proposals that skip those checks. State::apply has the last word: a
// step it refuses is not recorded, only counted, so that a test can make
// sure most proposals are accepted.
#ifndef KILN_TEST_E2E_RANDOM_SCHEDULE_H
#define KILN_TEST_E2E_RANDOM_SCHEDULE_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/state.h"

#include <cstdint>
#include <map>
#include <string>

namespace kiln::test {

struct RandomScheduleOptions {
  int min_proposals = 1;
  int max_proposals = 14;
  /// Largest product of the extents of the loops a stage unrolls
  /// explicitly: the generator stops proposing `unroll` beyond it, so that
  /// kernels stay small enough to compile in milliseconds.
  std::int64_t max_unrolled = 64;
  /// The share of "wild" proposals, which skip the generator's own checks
  /// (a split of a loop something is computed at, a compute_at into an
  /// indirect reader, …) so that State::apply's refusals are tested too.
  double wild = 0.1;
};

struct RandomScheduleStats {
  int proposed = 0;
  int refused = 0;
  /// Proposals and refusals by step tag ("split", "vectorize", …).
  std::map<std::string, int> proposed_by_tag, refused_by_tag;
  /// The first refusal message of each tag, to see why when there are many.
  std::map<std::string, std::string> example_refusal;

  void add(const RandomScheduleStats& other);
};

/// A random schedule of `dag`, the same for the same seed and options.
/// `stats`, when given, accumulates what was proposed and refused.
schedule::State random_schedule(const ir::ComputeDAG& dag, std::uint64_t seed,
                                RandomScheduleStats* stats = nullptr,
                                const RandomScheduleOptions& options = {});

} // namespace kiln::test

#endif
