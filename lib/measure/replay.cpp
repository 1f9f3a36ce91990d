#include "kiln/measure/replay.h"

#include "kiln/ir/parser.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<ir::ComputeDAG> dag_of(const Record& record) {
  auto dag = ir::parse_op(record.task.dag_text, record.task.source + " (as logged)");
  if (!dag)
    return Error("bad-record", fmt::format("the logged op of task {} does not parse: {}",
                                           record.task.workload_key, dag.error().render()));
  // The canonical text carries shapes, not parameters: put them back.
  return ir::ComputeDAG(dag->name(), dag->stages(), record.task.params);
}

Expected<MeasureResult> replay(const Record& record, const Target& target,
                               const MeasureOptions& options) {
  auto dag = dag_of(record);
  if (!dag)
    return dag.error();
  if (dag->workload_key() != record.task.workload_key)
    return Error("bad-record",
                 fmt::format("the logged op text gives workload key {}, not the logged {}; the "
                             "record was written by an incompatible kiln",
                             dag->workload_key(), record.task.workload_key));
  auto measurer = ProgramMeasurer::create(*dag, target, options);
  if (!measurer)
    return measurer.error();
  return (*measurer)->measure({record.config}).front();
}

std::string best_table(const std::vector<const Record*>& best) {
  std::string out = fmt::format("{:<18} {:<28} {:>9} {:>11} {:>6}  {:<14} {}\n", "op", "params",
                                "GFLOPS", "time (ms)", "trial", "cpu", "workload key");
  for (const Record* r : best) {
    std::string params;
    for (const ir::Param& p : r->task.params)
      params += fmt::format("{}{}={}", params.empty() ? "" : " ", p.name, p.value);
    out += fmt::format("{:<18} {:<28} {:>9.2f} {:>11.4f} {:>6}  {:<14} {}\n", r->task.op_name,
                       params, r->gflops(), r->result.median() * 1e3, r->trial, r->target.cpu,
                       r->task.workload_key);
  }
  return out;
}

} // namespace kiln::measure
