#include "log_view.h"

#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>

namespace kiln::report {

namespace {

constexpr std::string_view kBaselinePrefix = "baseline/";

std::string params_text(const record::TaskInfo& task) {
  std::string s;
  for (const ir::Param& p : task.params)
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", p.name, p.value);
  return s;
}

void split_label(RunView& run) {
  std::string_view l = run.label;
  std::string_view head = l.substr(0, l.find('/'));
  run.mode =
      head == "online" || head == "offline" || head == "hybrid" ? std::string(head) : "other";
  if (std::size_t a = l.find('/'); a != std::string_view::npos) {
    std::string_view rest = l.substr(a + 1);
    run.strategy = std::string(rest.substr(0, rest.find('/')));
  }
}

bool better(const record::Record* candidate, const record::Record* best) {
  return candidate->result.ok() && (!best || candidate->gflops() > best->gflops());
}

/// Tuning time of a run. Round lines carry the tuner's own clock (from the
/// start of the run, so the first measurement's time is included); a
/// resumed run restarts that clock, so each restart adds the time before it.
/// Without rounds, the span of the record timestamps, plus the first
/// record's own build and run time, which its timestamp comes after.
double run_seconds(const RunView& run) {
  if (!run.rounds.empty()) {
    double total = 0, session = 0, previous = -1;
    for (const record::RoundRecord* r : run.rounds) {
      if (r->elapsed_seconds < previous) {
        total += session;
        session = 0;
      }
      session = std::max(session, r->elapsed_seconds);
      previous = r->elapsed_seconds;
    }
    return total + session;
  }
  if (run.records.empty())
    return 0;
  double lo = run.records.front()->timestamp, hi = lo;
  for (const record::Record* r : run.records) {
    lo = std::min(lo, r->timestamp);
    hi = std::max(hi, r->timestamp);
  }
  const record::Record* first = run.records.front();
  return hi - lo + first->result.build_seconds + first->result.run_seconds;
}

} // namespace

bool is_naive(const record::Record& r) {
  return r.config.steps.empty() && r.config.template_name.empty() && r.config.knobs.empty() &&
         r.config.point.empty();
}

int mode_order(const std::string& mode) {
  return mode == "online" ? 0 : mode == "offline" ? 1 : mode == "hybrid" ? 2 : 3;
}

LogView make_view(const record::LoadedLog& log, const ReportOptions& options) {
  LogView view;
  std::unordered_map<std::string, std::size_t> task_index;
  std::unordered_map<std::string, std::string> colours; // run label → colour
  // Best baseline record per (task, label): a library measured several times.
  std::map<std::pair<std::size_t, std::string>, double> baseline_records;

  auto task_of = [&](const std::string& key) -> TaskView& {
    auto [it, added] = task_index.emplace(key, view.tasks.size());
    if (added) {
      view.tasks.emplace_back();
      view.tasks.back().key = key;
    }
    return view.tasks[it->second];
  };
  auto run_of = [&](TaskView& task, const std::string& label) -> RunView& {
    for (RunView& r : task.runs)
      if (r.label == label)
        return r;
    RunView& run = task.runs.emplace_back();
    run.label = label;
    split_label(run);
    auto [it, added] = colours.emplace(label, palette(colours.size()));
    run.colour = it->second;
    return run;
  };

  bool any_time = false;
  for (const record::Record& r : log.records) {
    TaskView& task = task_of(r.task.workload_key);
    if (task.op.empty()) {
      task.op = r.task.op_name;
      task.params = params_text(r.task);
      task.flops = r.task.flops;
    }
    if (r.run.starts_with(kBaselinePrefix)) {
      if (r.result.ok()) {
        double& g = baseline_records[{task_index[r.task.workload_key],
                                      r.run.substr(kBaselinePrefix.size())}];
        g = std::max(g, r.gflops());
      }
      continue;
    }
    ++view.records;
    task.records.push_back(&r);
    RunView& run = run_of(task, r.run.empty() ? "(unlabelled)" : r.run);
    run.records.push_back(&r);
    if (r.result.ok()) {
      ++view.valid;
    } else if (r.result.error != record::MeasureError::None) {
      ++view.errors;
      ++run.errors;
      ++task.errors;
    }
    if (better(&r, run.best))
      run.best = &r;
    if (better(&r, task.best))
      task.best = &r;
    if (is_naive(r) && r.result.ok()) {
      if (!run.naive)
        run.naive = &r;
      if (!task.naive)
        task.naive = &r;
    }
    if (r.timestamp > 0) {
      view.first_time = any_time ? std::min(view.first_time, r.timestamp) : r.timestamp;
      view.last_time = any_time ? std::max(view.last_time, r.timestamp) : r.timestamp;
      any_time = true;
    }
  }
  for (const record::RoundRecord& round : log.rounds) {
    TaskView& task = task_of(round.workload_key);
    run_of(task, round.run.empty() ? "(unlabelled)" : round.run).rounds.push_back(&round);
  }

  for (const auto& [where, gflops] : baseline_records)
    view.tasks[where.first].baselines.push_back(
        {where.second, gflops, view.tasks[where.first].key});
  for (TaskView& task : view.tasks) {
    for (const Baseline& b : options.baselines)
      if (b.workload_key.empty() || b.workload_key == task.key)
        task.baselines.push_back(b);
    for (RunView& run : task.runs) {
      std::stable_sort(
          run.records.begin(), run.records.end(),
          [](const record::Record* a, const record::Record* b) { return a->trial < b->trial; });
      run.seconds = run_seconds(run);
    }
  }
  view.runs = colours.size();
  return view;
}

} // namespace kiln::report
