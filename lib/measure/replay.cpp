#include "kiln/measure/replay.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<record::MeasureResult> replay(const record::Record& record, const Target& target,
                                       const MeasureOptions& options) {
  auto dag = record::task_dag(record.task);
  if (!dag)
    return dag.error();
  if (dag->workload_key() != record.task.workload_key)
    return Error("bad-record",
                 fmt::format("the logged op text gives workload key {}, not the logged {}; the "
                             "record was written by an incompatible kiln",
                             dag->workload_key(), record.task.workload_key));
  if (!record.config.program())
    return Error("bad-record", fmt::format("trial {} of task {} is a template config logged by its "
                                           "knobs alone, without its steps; tune the task again "
                                           "with this kiln to log it replayably",
                                           record.trial, record.task.workload_key));
  auto state = schedule::State::replay(*dag, record.config.steps);
  if (!state) {
    record::MeasureResult invalid;
    invalid.error = record::MeasureError::InvalidSchedule;
    invalid.message = state.error().message();
    return invalid;
  }
  auto measurer = ProgramMeasurer::create(*dag, target, options);
  if (!measurer)
    return measurer.error();
  const schedule::State* one[] = {&*state};
  return (*measurer)->measure(one).front();
}

} // namespace kiln::measure
