#include "kiln/export/choose_records.h"

#include "kiln/ir/parser.h"
#include "kiln/schedule/state.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace kiln::export_ {

Expected<std::vector<ir::ComputeDAG>> tasks_of_records(const std::vector<record::Record>& records) {
  std::vector<ir::ComputeDAG> tasks;
  std::set<std::string> seen;
  for (const record::Record& r : records) {
    if (!seen.insert(r.task.workload_key).second)
      continue;
    auto dag = record::task_dag(r.task);
    if (!dag)
      return dag.error();
    tasks.push_back(std::move(*dag));
  }
  return tasks;
}

Expected<std::vector<ir::ComputeDAG>> tasks_of_op_folder(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".kop")
      files.push_back(it->path().string());
  if (ec)
    return Error("no-op-files",
                 fmt::format("--ops '{}': cannot read the folder: {}", dir, ec.message()));
  if (files.empty())
    return Error("no-op-files", fmt::format("--ops '{}': the folder holds no op file (*.kop); "
                                            "give the folder of the op files that were tuned",
                                            dir));
  std::sort(files.begin(), files.end());
  std::vector<ir::ComputeDAG> tasks;
  for (const std::string& file : files) {
    auto dag = ir::parse_op_file(file);
    if (!dag)
      return dag.error();
    tasks.push_back(std::move(*dag));
  }
  return tasks;
}

Expected<std::vector<ExportItem>> choose_records(const std::vector<ir::ComputeDAG>& tasks,
                                                 const std::vector<record::Record>& records,
                                                 const ChooseOptions& options) {
  std::vector<ExportItem> items;
  for (const ir::ComputeDAG& dag : tasks) {
    ExportItem item{dag, std::nullopt, record::TargetMatch::Exact, ""};
    const std::string key = dag.workload_key();
    record::TargetMatch match{};
    const record::Record* best = record::history_best(records, key, options.target, &match);
    if (!best) {
      item.note = "naive schedule: the logs hold no valid record of this task";
      items.push_back(std::move(item));
      continue;
    }
    if (match == record::TargetMatch::Any && options.strict_target && !options.allow_any_target)
      return Error("no-record-for-target",
                   fmt::format("task {} ({}): the logs hold records of it only for other kinds of "
                               "machine (the best is of {} {}), none of {} {} or its family; a "
                               "schedule tuned elsewhere says nothing about that machine. Tune "
                               "it there, export for another --target, or pass "
                               "--allow-any-target to take the best of any machine",
                               dag.name(), key, best->target.triple, best->target.cpu,
                               options.target.triple, options.target.cpu));
    if (!best->config.program()) {
      item.note = fmt::format("naive schedule: trial {}, the best record, keeps a template's "
                              "knobs without its steps",
                              best->trial);
      items.push_back(std::move(item));
      continue;
    }
    auto state = schedule::State::replay(dag, best->config.steps);
    if (!state) {
      item.note = fmt::format("naive schedule: the steps of trial {}, the best record, do not "
                              "apply: {}",
                              best->trial, state.error().message());
      items.push_back(std::move(item));
      continue;
    }
    item.record = *best;
    item.match = match;
    if (match != record::TargetMatch::Exact)
      item.note = fmt::format("no record of {}: the best of {} ({})", options.target.cpu,
                              best->target.cpu, record::target_match_name(match));
    items.push_back(std::move(item));
  }
  return items;
}

} // namespace kiln::export_
