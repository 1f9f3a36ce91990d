// Re-measuring what a log recorded: `kiln best` and `kiln replay`.
#ifndef KILN_MEASURE_REPLAY_H
#define KILN_MEASURE_REPLAY_H

#include "kiln/measure/measurer.h"
#include "kiln/measure/record.h"

#include <string>
#include <vector>

namespace kiln::measure {

/// The DAG a record was measured on, rebuilt from its canonical text. An
/// Error when the text no longer parses (a log from an incompatible kiln).
Expected<ir::ComputeDAG> dag_of(const Record& record);

/// Rebuilds the record's config on `target`, checks its answer against the
/// naive reference and times it again.
Expected<MeasureResult> replay(const Record& record, const Target& target,
                               const MeasureOptions& options);

/// A table of the best valid record per task and target: op, parameters,
/// GFLOPS, median time, trial index, target, workload key.
std::string best_table(const std::vector<const Record*>& best);

} // namespace kiln::measure

#endif
