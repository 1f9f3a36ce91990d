// The nearest-shape fallback, checked: for a workload with no record, the
// refitted configs of the nearest tuned shape (record/nearest_shape.h) built,
// run against the reference and timed here, the fastest right one taken.
// Used where a schedule is chosen for this machine without tuning
// (api::Backend::best, `kiln run MODEL --log`).
#ifndef KILN_MEASURE_NEAREST_PICK_H
#define KILN_MEASURE_NEAREST_PICK_H

#include "kiln/measure/measurer.h"
#include "kiln/record/nearest_shape.h"

#include <optional>
#include <string>

namespace kiln::measure {

/// How many nearest-shape configs a pick builds and times: enough that one
/// failing tile fit is not the end, few enough to take seconds.
inline constexpr std::size_t kNearestCandidates = 3;

struct NearestPick {
  /// A record of `dag`'s workload: the refitted config and its measurement
  /// here (run "nearest-shape", trial -1).
  record::Record record;
  /// "nearest shape: trial 412 of matmul M=256 … , tile sizes refitted;
  /// checked and timed here: 0.84 ms (2 of 3 candidates right)".
  std::string description;
};

/// The fastest of up to `candidates` nearest-shape configs for `dag` that
/// builds and gives the reference's answer on `target` (this machine).
/// nullopt with `why` set when there is no other shape of the op in
/// `records`, or none of its configs is right here; an Error when the
/// reference itself cannot be computed.
Expected<std::optional<NearestPick>> pick_nearest_shape(const std::vector<record::Record>& records,
                                                        const ir::ComputeDAG& dag,
                                                        const Target& target,
                                                        const MeasureOptions& options,
                                                        std::size_t candidates, std::string* why);

} // namespace kiln::measure

#endif // KILN_MEASURE_NEAREST_PICK_H
