#include "kiln/record/nearest_shape.h"

#include "kiln/record/history.h"
#include "kiln/schedule/refit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace kiln::record {

/// Every loop of a compute stage, axes then reduction axes.
static std::vector<ir::IterVar> loops_of(const ir::Stage& stage) {
  std::vector<ir::IterVar> loops = stage.axes;
  if (const ir::Reduce* r = stage.reduction())
    loops.insert(loops.end(), r->axes.begin(), r->axes.end());
  return loops;
}

std::optional<double> shape_distance(const ir::ComputeDAG& a, const ir::ComputeDAG& b) {
  if (a.name() != b.name() || a.stages().size() != b.stages().size())
    return std::nullopt;
  double distance = 0;
  for (size_t s = 0; s < a.stages().size(); ++s) {
    const ir::Stage& sa = a.stages()[s];
    const ir::Stage& sb = b.stages()[s];
    if (sa.name != sb.name || sa.kind != sb.kind || sa.axes.size() != sb.axes.size())
      return std::nullopt;
    if (sa.is_placeholder())
      continue; // its extents are the loops' of the stages that read it
    const std::vector<ir::IterVar> la = loops_of(sa), lb = loops_of(sb);
    if (la.size() != lb.size())
      return std::nullopt;
    for (size_t i = 0; i < la.size(); ++i) {
      if (la[i].name != lb[i].name || la[i].extent < 1 || lb[i].extent < 1)
        return std::nullopt;
      distance += std::abs(std::log(double(la[i].extent) / double(lb[i].extent)));
    }
  }
  return distance;
}

std::string NearestConfig::describe() const {
  std::string shape;
  for (const ir::Param& p : from->task.params)
    shape += fmt::format(" {}={}", p.name, p.value);
  if (shape.empty())
    shape = " " + from->task.workload_key;
  return fmt::format("trial {} of {}{} ({}, {:.2f} GFLOPS on {}), tile sizes refitted", from->trial,
                     from->task.op_name, shape, from->run, from->gflops(), from->target.cpu);
}

namespace {
struct Neighbour {
  std::string key;
  double distance;
  std::vector<const Record*> records;
};
} // namespace

/// The valid records of other shapes of `dag`'s op, grouped by workload,
/// nearest first (ties by key, so the order does not depend on the logs').
static std::vector<Neighbour> neighbours(const std::vector<Record>& records,
                                         const ir::ComputeDAG& dag) {
  const std::string own = dag.workload_key();
  std::map<std::string, std::vector<const Record*>> by_key;
  for (const Record& r : records)
    if (r.result.ok() && r.task.workload_key != own && r.task.op_name == dag.name())
      by_key[r.task.workload_key].push_back(&r);
  std::vector<Neighbour> out;
  for (auto& [key, group] : by_key) {
    auto other = task_dag(group.front()->task);
    if (!other)
      continue; // a log of an incompatible kiln: nothing to refit
    if (std::optional<double> d = shape_distance(dag, *other))
      out.push_back({key, *d, std::move(group)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Neighbour& a, const Neighbour& b) { return a.distance < b.distance; });
  return out;
}

std::vector<NearestConfig> nearest_shape_configs(const std::vector<Record>& records,
                                                 const ir::ComputeDAG& dag, const Target& target,
                                                 std::size_t max_configs) {
  std::vector<NearestConfig> out;
  std::set<schedule::ProgramKey> seen;
  for (const Neighbour& n : neighbours(records, dag)) {
    // The records of the CPU closest to `target` only: timings of two
    // machines do not rank together.
    TargetMatch closest = TargetMatch::Any;
    for (const Record* r : n.records)
      closest = std::min(closest, target_match(r->target, target));
    std::vector<const Record*> same;
    for (const Record* r : n.records)
      if (target_match(r->target, target) == closest &&
          (closest != TargetMatch::Any || r->target.cpu == n.records.front()->target.cpu))
        same.push_back(r);
    for (const Record* r : ranked_configs(same)) {
      if (out.size() == max_configs)
        return out;
      auto steps = schedule::refit_steps(dag, r->config.steps);
      if (!steps)
        continue;
      Config config;
      config.steps = std::move(*steps);
      if (!seen.insert(*config.program()).second)
        continue;
      out.push_back({std::move(config), r, n.distance});
    }
  }
  return out;
}

} // namespace kiln::record
