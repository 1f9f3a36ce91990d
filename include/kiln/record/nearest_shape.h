// Records of a neighbouring shape: for a workload that has no record, the
// best configs of the nearest tuned workload of the same op, their tile
// sizes refitted to the new extents (schedule/refit.h). What a backend falls
// back on for a shape it never tuned (api::Backend::best, `kiln run`) and
// what the tuner measures first on a new shape (`kiln tune --transfer`).
#ifndef KILN_RECORD_NEAREST_SHAPE_H
#define KILN_RECORD_NEAREST_SHAPE_H

#include "kiln/ir/compute_dag.h"
#include "kiln/record/record.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::record {

/// How far apart two shapes of one op are: the sum over every compute
/// stage's loops (axes and reduction axes) of |ln(extent_a / extent_b)|;
/// 0 for equal extents. nullopt when they are not shapes of one op: another
/// op name, other stages, other loop names.
std::optional<double> shape_distance(const ir::ComputeDAG& a, const ir::ComputeDAG& b);

/// A config of another shape, fitted to this one.
struct NearestConfig {
  Config config;       ///< the record's steps, refitted (its point dropped)
  const Record* from;  ///< the record it came from (its config median)
  double distance = 0; ///< shape_distance of the two workloads
  std::string
  describe() const; ///< "trial 412 of matmul M=256 N=256 K=256 (…, 81.3 GFLOPS on znver3)"
};

/// Up to `max_configs` configs for `dag` from the records of other shapes
/// of its op: the nearest tuned workload's best configs first (ranked as
/// history_best ranks them, among the records of the CPU closest to
/// `target`: the same CPU, else the same family, else any), then the next
/// workload's. Configs whose steps do not refit are skipped, and so are
/// duplicates. Empty when no other shape of the op has a valid record.
std::vector<NearestConfig> nearest_shape_configs(const std::vector<Record>& records,
                                                 const ir::ComputeDAG& dag, const Target& target,
                                                 std::size_t max_configs);

} // namespace kiln::record

#endif // KILN_RECORD_NEAREST_SHAPE_H
