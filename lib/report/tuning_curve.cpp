// Tuning curve: the best GFLOPS found so far against trials and against wall
// time, one step line per run, library baselines as horizontal lines.
#include "sections.h"
#include "stats.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::report {

namespace {

/// Baselines are drawn in neutral and purple tones, apart from the runs'.
std::string baseline_colour(std::size_t i) {
  static const char* const kColours[] = {"#57606a", "#8250df", "#bf3989", "#1a7f37"};
  return kColours[i % 4];
}

/// Keeps a staircase drawable when a run improved on most of its trials.
std::vector<XY> thin(std::vector<XY> pts, std::size_t max_points) {
  if (pts.size() <= max_points)
    return pts;
  std::vector<XY> out;
  for (std::size_t i : spread(pts.size(), max_points))
    out.push_back(pts[i]);
  return out;
}

std::vector<XY> best_by_trial(const RunView& run) {
  std::vector<XY> pts;
  double best = 0, last = 0;
  for (const record::Record* r : run.records) {
    double x = static_cast<double>(r->trial + 1);
    last = std::max(last, x);
    if (r->result.ok() && r->gflops() > best) {
      best = r->gflops();
      pts.push_back({x, best});
    }
  }
  if (!pts.empty() && last > pts.back().x)
    pts.push_back({last, best}); // the budget spent after the last improvement
  return pts;
}

/// From the round clock when the run logged rounds (a resumed run's clock
/// restarts: its sessions are laid end to end), else from timestamps.
std::vector<XY> best_by_time(const RunView& run) {
  std::vector<XY> pts;
  double best = 0, last = 0;
  double offset = 0, session = 0, previous = -1;
  for (const record::RoundRecord* r : run.rounds) {
    if (r->elapsed_seconds < previous) {
      offset += session;
      session = 0;
    }
    session = std::max(session, r->elapsed_seconds);
    previous = r->elapsed_seconds;
    double t = offset + r->elapsed_seconds;
    last = std::max(last, t);
    if (r->best_gflops > best) {
      best = r->best_gflops;
      pts.push_back({t, best});
    }
  }
  if (pts.empty() && !run.records.empty()) {
    // The first record is stamped after it was built and run.
    const record::Record* first = run.records.front();
    double t0 = first->timestamp - first->result.build_seconds - first->result.run_seconds;
    for (const record::Record* r : run.records)
      t0 = std::min(t0, r->timestamp);
    for (const record::Record* r : run.records) {
      double t = r->timestamp - t0;
      last = std::max(last, t);
      if (r->result.ok() && r->gflops() > best) {
        best = r->gflops();
        pts.push_back({t, best});
      }
    }
    std::sort(pts.begin(), pts.end(), [](const XY& a, const XY& b) { return a.x < b.x; });
  }
  if (!pts.empty() && last > pts.back().x)
    pts.push_back({last, best});
  return pts;
}

struct TimeUnit {
  double divide;
  const char* name;
};
TimeUnit time_unit(double max_seconds) {
  if (max_seconds <= 300)
    return {1, "s"};
  if (max_seconds <= 3 * 3600)
    return {60, "min"};
  return {3600, "h"};
}

} // namespace

Section tuning_curve_section(const LogView& view, const ReportOptions& options) {
  Section sec{"tuning-curve", "Tuning curve", ""};
  std::string& b = sec.body;
  b += note("The best GFLOPS found so far (higher is better), one step line per run label: a step "
            "up is a faster config. Wall time comes from the tuner's round clock when the log "
            "has round lines, else from record timestamps. Dashed lines are library "
            "baselines.");
  bool drew = false;
  for (std::size_t t = 0; t < view.tasks.size() && t < kMaxTaskCharts; ++t) {
    const TaskView& task = view.tasks[t];
    if (task.records.empty() && task.baselines.empty())
      continue;
    b += task_heading(view, task);
    if (!task.best) {
      b += note("No config of this task has a valid time yet, so there is no curve.");
      if (task.baselines.empty())
        continue;
    }
    SvgChart trials(fmt::format("curve-trials-{}", t), "Best GFLOPS by trials",
                    linear_axis("trials measured"), linear_axis("best GFLOPS (higher is better)"));
    std::vector<std::pair<const RunView*, std::vector<XY>>> by_time;
    double max_t = 0;
    for (const RunView& run : task.runs) {
      std::vector<XY> pts = best_by_trial(run);
      if (!pts.empty())
        trials.line(run.label, run.colour, thin(std::move(pts), options.max_points), true);
      std::vector<XY> tp = best_by_time(run);
      if (!tp.empty()) {
        max_t = std::max(max_t, tp.back().x);
        by_time.emplace_back(&run, std::move(tp));
      }
    }
    TimeUnit unit = time_unit(max_t);
    SvgChart time(fmt::format("curve-time-{}", t), "Best GFLOPS by wall time",
                  linear_axis(fmt::format("wall time since the run started ({})", unit.name)),
                  linear_axis("best GFLOPS (higher is better)"));
    for (auto& [run, pts] : by_time) {
      for (XY& p : pts)
        p.x /= unit.divide;
      time.line(run->label, run->colour, thin(std::move(pts), options.max_points), true);
    }
    for (std::size_t i = 0; i < task.baselines.size(); ++i) {
      trials.hline(task.baselines[i].gflops, task.baselines[i].label, baseline_colour(i));
      time.hline(task.baselines[i].gflops, task.baselines[i].label, baseline_colour(i));
    }
    b += "<div class=\"charts\">\n" + trials.render() + time.render() + "</div>\n";
    drew = true;
  }
  if (!drew)
    b += note("The log has no measured config: nothing to draw.");
  b += more_tasks_note(view);
  return sec;
}

} // namespace kiln::report
