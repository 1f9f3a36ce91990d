// The network view: for logs of `kiln tune MODEL`, the network's estimated
// latency (Σ weight × each task's best time) against the trials of the whole
// run, one line per run (a gradient and a round-robin run side by side),
// and how each run spent its trials and where the network's time goes.
// The task table comes from the log's network lines; the curve is replayed
// from the records in log order, so a resumed run continues its curve.
#include "sections.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace kiln::report {

namespace {

/// One network run as the section draws it.
struct NetworkRun {
  const record::NetworkRecord* table = nullptr; ///< its last network line
  std::string colour;
  std::vector<XY> by_trials, by_time; ///< estimate in ms, once every task has a time
  std::vector<std::int64_t> trials;   ///< per task
  std::vector<double> best_seconds;   ///< per task; 0: none valid
  std::vector<double> naive_seconds;  ///< per task; 0: not measured
  double estimate_ms() const;
};

double NetworkRun::estimate_ms() const {
  double sum = 0;
  for (std::size_t t = 0; t < best_seconds.size(); ++t) {
    if (best_seconds[t] <= 0)
      return -1;
    sum += table->tasks[t].weight * best_seconds[t];
  }
  return sum * 1e3;
}

/// The runs of the log's network lines, first appearance order; a run
/// resumed writes its line again, and the last one counts.
std::vector<NetworkRun> network_runs(const record::LoadedLog& log) {
  std::vector<NetworkRun> runs;
  std::map<std::string, std::size_t> index;
  for (const record::NetworkRecord& n : log.networks) {
    auto [it, added] = index.emplace(n.run, runs.size());
    if (added) {
      runs.emplace_back();
      runs.back().colour = palette(runs.size() - 1);
    }
    runs[it->second].table = &n;
  }
  for (NetworkRun& run : runs) {
    const std::size_t n = run.table->tasks.size();
    run.trials.assign(n, 0);
    run.best_seconds.assign(n, 0);
    run.naive_seconds.assign(n, 0);
  }
  for (NetworkRun& run : runs) {
    std::unordered_map<std::string, std::size_t> task_of;
    for (std::size_t t = 0; t < run.table->tasks.size(); ++t)
      task_of.emplace(run.table->tasks[t].key, t);
    std::int64_t seen = 0;
    double t0 = -1;
    for (const record::Record& r : log.records) {
      auto it = task_of.find(r.task.workload_key);
      if (r.run != run.table->run || it == task_of.end())
        continue;
      ++seen;
      ++run.trials[it->second];
      if (t0 < 0)
        t0 = r.timestamp - r.result.build_seconds - r.result.run_seconds;
      if (!r.result.ok())
        continue;
      const double s = r.result.median();
      if (is_naive(r))
        run.naive_seconds[it->second] = s;
      double& best = run.best_seconds[it->second];
      if (best > 0 && s >= best)
        continue;
      best = s;
      const double estimate = run.estimate_ms();
      if (estimate > 0) {
        run.by_trials.push_back({static_cast<double>(seen), estimate});
        run.by_time.push_back({std::max(0.0, r.timestamp - t0), estimate});
      }
    }
    if (!run.by_trials.empty() && seen > run.by_trials.back().x)
      run.by_trials.push_back({static_cast<double>(seen), run.by_trials.back().y});
  }
  return runs;
}

std::string estimate_chart(const std::vector<NetworkRun>& runs, bool by_time) {
  double max_t = 0;
  for (const NetworkRun& r : runs)
    if (!r.by_time.empty())
      max_t = std::max(max_t, r.by_time.back().x);
  const bool minutes = by_time && max_t > 300;
  SvgChart c(by_time ? "network-time" : "network-trials",
             by_time ? "Network estimate by wall time" : "Network estimate by measurements",
             linear_axis(by_time ? (minutes ? "wall time (min)" : "wall time (s)")
                                 : "measurements, all tasks (trials, then confirmations)"),
             log_axis("estimated latency, ms (lower is better)"));
  for (const NetworkRun& r : runs) {
    std::vector<XY> pts = by_time ? r.by_time : r.by_trials;
    if (minutes)
      for (XY& p : pts)
        p.x /= 60;
    if (!pts.empty())
      c.line(r.table->run, r.colour, std::move(pts), true);
  }
  return c.render();
}

/// Horizontal bars, one row per task, one bar per run within the row.
std::string task_bars(const std::string& id, const std::string& title, const std::string& unit,
                      const std::vector<NetworkRun>& runs,
                      const std::vector<std::vector<double>>& values,
                      const std::vector<std::string>& tips) {
  const std::vector<record::NetworkRecord::Task>& tasks = runs.front().table->tasks;
  std::vector<std::string> labels;
  for (std::size_t t = tasks.size(); t-- > 0;)
    labels.push_back(fmt::format("T{} {}", t, tasks[t].name));
  const double band = 0.7 / static_cast<double>(runs.size());
  SvgChart c(id, title, linear_axis(unit), ordinal_axis("", labels), 640,
             86 + 22 * static_cast<int>(tasks.size() * std::max<std::size_t>(1, runs.size())));
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (std::size_t t = 0; t < tasks.size() && t < values[r].size(); ++t) {
      const double y = static_cast<double>(tasks.size() - 1 - t) + 0.35 - band * (r + 1);
      c.rect(0, values[r][t], y, y + band * 0.9, runs[r].colour,
             fmt::format("{} T{}: {}", runs[r].table->run, t, tips[r * tasks.size() + t]));
    }
    c.legend(runs[r].table->run, runs[r].colour);
  }
  return c.render();
}

std::string ms_text(double seconds) {
  return seconds > 0 ? format_number(seconds * 1e3) : "–";
}

std::string run_table(const NetworkRun& run) {
  std::vector<std::vector<std::string>> rows;
  const double estimate = run.estimate_ms();
  for (std::size_t t = 0; t < run.table->tasks.size(); ++t) {
    const record::NetworkRecord::Task& task = run.table->tasks[t];
    const double best = run.best_seconds[t];
    const double share = estimate > 0 ? task.weight * best * 1e3 / estimate : 0;
    const double naive = run.naive_seconds[t];
    rows.push_back({fmt::format("T{}", t), escape(task.name), format_number(task.weight),
                    format_count(run.trials[t]), ms_text(best),
                    estimate > 0 ? fmt::format("{:.1f}%", 100 * share) : "–",
                    naive > 0 && best > 0 ? format_number(naive / best) + "×" : "–",
                    "<code>" + escape(task.key) + "</code>"});
  }
  return table({"task", "fused ops", "#weight", "#measurements", "#best (ms)",
                "#share of the network", "#speedup over naive", "key"},
               rows);
}

} // namespace

Section network_section(const record::LoadedLog& log, const ReportOptions&) {
  Section sec{"network", "Network", ""};
  std::string& b = sec.body;
  std::vector<NetworkRun> runs = network_runs(log);
  if (runs.empty()) {
    b += note("The log has no network lines (they come from kiln tune MODEL.onnx).");
    return sec;
  }
  b += note("The network's estimated latency is Σ weight × the best time of each task, from the "
            "records in log order; a run has a point once every task has a valid time. Each run "
            "is one kiln tune MODEL: its label names the task scheduler, so a gradient run and a "
            "round-robin run read side by side (give both logs to kiln report).");
  std::vector<std::vector<std::string>> summary;
  for (const NetworkRun& r : runs) {
    std::int64_t trials = 0;
    for (std::int64_t n : r.trials)
      trials += n;
    const double estimate = r.estimate_ms();
    summary.push_back({escape(r.table->run), escape(r.table->model), escape(r.table->scheduler),
                       format_count(static_cast<long long>(r.table->tasks.size())),
                       format_count(trials), estimate > 0 ? format_number(estimate) : "–"});
  }
  b += table({"run", "model", "scheduler", "#tasks", "#measurements", "#estimate (ms)"}, summary);
  b += "<div class=\"charts\">\n" + estimate_chart(runs, false) + estimate_chart(runs, true) +
       "</div>\n";

  // Bars need one task table: runs of another model are listed, not drawn.
  std::vector<NetworkRun> same;
  for (const NetworkRun& r : runs) {
    if (r.table->model == runs.front().table->model &&
        r.table->tasks.size() == runs.front().table->tasks.size())
      same.push_back(r);
  }
  std::vector<std::vector<double>> trials(same.size()), shares(same.size());
  std::vector<std::string> trial_tips, share_tips;
  for (std::size_t r = 0; r < same.size(); ++r) {
    const double estimate = same[r].estimate_ms();
    for (std::size_t t = 0; t < same[r].trials.size(); ++t) {
      trials[r].push_back(static_cast<double>(same[r].trials[t]));
      trial_tips.push_back(format_count(same[r].trials[t]) + " measurements");
      const double share = estimate > 0 ? 100 * same[r].table->tasks[t].weight *
                                              same[r].best_seconds[t] * 1e3 / estimate
                                        : 0;
      shares[r].push_back(share);
      share_tips.push_back(fmt::format("{:.1f}% of the network", share));
    }
  }
  b += "<div class=\"charts\">\n" +
       task_bars("network-trials-per-task", "Measurements per task", "measurements", same, trials,
                 trial_tips) +
       task_bars("network-share", "Share of the network's time", "% of the estimate", same, shares,
                 share_tips) +
       "</div>\n";
  for (const NetworkRun& r : runs) {
    b += fmt::format("<h3>{}</h3>\n", escape(r.table->run));
    b += run_table(r);
  }
  return sec;
}

} // namespace kiln::report
