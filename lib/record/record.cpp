#include "kiln/record/record.h"

#include "kiln/ir/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kiln::record {

std::string_view error_name(MeasureError e) {
  switch (e) {
  case MeasureError::None:
    return "none";
  case MeasureError::InvalidSchedule:
    return "invalid_schedule";
  case MeasureError::CompileError:
    return "compile_error";
  case MeasureError::RuntimeCrash:
    return "runtime_crash";
  case MeasureError::Timeout:
    return "timeout";
  case MeasureError::WrongAnswer:
    return "wrong_answer";
  }
  return "?";
}

std::optional<MeasureError> parse_error_name(std::string_view name) {
  for (MeasureError e :
       {MeasureError::None, MeasureError::InvalidSchedule, MeasureError::CompileError,
        MeasureError::RuntimeCrash, MeasureError::Timeout, MeasureError::WrongAnswer})
    if (error_name(e) == name)
      return e;
  return std::nullopt;
}

TaskInfo TaskInfo::from_dag(const ir::ComputeDAG& dag, std::string source) {
  return TaskInfo{dag.workload_key(), dag.name(),        dag.params(),
                  dag.to_string(),    std::move(source), dag.flop_count()};
}

Expected<ir::ComputeDAG> task_dag(const TaskInfo& task) {
  auto dag = ir::parse_op(task.dag_text, task.source + " (as logged)");
  if (!dag)
    return Error("bad-record", fmt::format("the logged op of task {} does not parse: {}",
                                           task.workload_key, dag.error().render()));
  // The canonical text carries shapes, not parameters: put them back.
  return ir::ComputeDAG(dag->name(), dag->stages(), task.params);
}

std::optional<schedule::ProgramKey> Config::program() const {
  if (steps.empty() && !template_name.empty())
    return std::nullopt;
  return schedule::program_key(steps);
}

double MeasureResult::median() const {
  if (costs.empty())
    return 0;
  std::vector<double> c = costs;
  std::sort(c.begin(), c.end());
  return c.size() % 2 ? c[c.size() / 2] : (c[c.size() / 2 - 1] + c[c.size() / 2]) / 2;
}

double MeasureResult::min() const {
  return costs.empty() ? 0 : *std::min_element(costs.begin(), costs.end());
}

double Record::gflops() const {
  return result.ok() && result.median() > 0 ? task.flops / result.median() / 1e9 : 0;
}

} // namespace kiln::record
