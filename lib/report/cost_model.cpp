// Cost model vs reality: every measured config that carries the model's
// score (`predicted`), placed by that score and by the throughput it really
// reached, with Spearman's rank correlation. Scores and throughputs are
// normalised per task, so tasks of different sizes share one chart.
#include "sections.h"
#include "stats.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

namespace kiln::report {

namespace {

struct Point {
  const record::Record* record;
  std::size_t run; ///< index into the runs list below
  double x, y;     ///< normalised score, fraction of the task's best
};

std::string rho_text(double rho) {
  return std::isfinite(rho) ? fmt::format("{:.2f}", rho) : "–";
}

} // namespace

Section cost_model_section(const LogView& view, const ReportOptions& options) {
  Section sec{"cost-model", "Cost model vs reality", ""};
  std::string& b = sec.body;

  std::vector<const RunView*> runs; // one per label, across tasks
  std::map<std::string, std::size_t> run_index;
  std::vector<Point> valid, failed;
  std::vector<std::vector<std::string>> task_rows;
  for (const TaskView& task : view.tasks) {
    double lo = INFINITY, hi = -INFINITY;
    for (const record::Record* r : task.records)
      if (std::isfinite(r->predicted)) {
        lo = std::min(lo, r->predicted);
        hi = std::max(hi, r->predicted);
      }
    if (lo > hi)
      continue;
    double best = task.best ? task.best->gflops() : 0;
    std::vector<double> scores, speeds;
    for (const RunView& run : task.runs) {
      auto [it, added] = run_index.emplace(run.label, runs.size());
      if (added)
        runs.push_back(&run);
      for (const record::Record* r : run.records) {
        if (!std::isfinite(r->predicted))
          continue;
        double x = hi > lo ? (r->predicted - lo) / (hi - lo) : 0.5;
        if (r->result.ok() && best > 0) {
          valid.push_back({r, it->second, x, r->gflops() / best});
          scores.push_back(r->predicted);
          speeds.push_back(r->gflops());
        } else if (r->result.error != record::MeasureError::None) {
          failed.push_back({r, it->second, x, 0});
        }
      }
    }
    task_rows.push_back({escape(task.name()), format_count(static_cast<long long>(scores.size())),
                         rho_text(spearman(scores, speeds))});
  }
  if (valid.empty() && failed.empty()) {
    b += note("No record carries the model's score (<code>predicted</code>): the runs used no "
              "trained model, or the log comes from a kiln that did not record it.");
    return sec;
  }

  std::vector<double> xs, ys;
  for (const Point& p : valid) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  double rho = spearman(xs, ys);
  b += fmt::format("<p>Spearman's rank correlation between the predicted score and the measured "
                   "throughput: <b>ρ = {}</b> over {} measured configs{}. 1 means the model ranks "
                   "configs exactly as the machine does; 0, no better than chance.</p>\n",
                   rho_text(rho), format_count(static_cast<long long>(valid.size())),
                   view.tasks.size() > 1 ? " (pooled after normalising per task)" : "");

  Axis x = linear_axis("predicted score (0 = task's lowest, 1 = highest)");
  Axis y = linear_axis("GFLOPS / task's best GFLOPS");
  x.min = y.min = 0;
  x.max = y.max = 1;
  SvgChart chart("model-scatter", "Predicted score vs measured throughput", x, y, 760, 440);
  std::vector<std::vector<Marker>> by_run(runs.size());
  std::vector<std::size_t> shown = spread(valid.size(), options.max_points);
  for (std::size_t i : shown) {
    const Point& p = valid[i];
    by_run[p.run].push_back(
        {p.x, p.y, "",
         fmt::format("{} · trial {} · {} GFLOPS · score {}", runs[p.run]->label, p.record->trial,
                     format_number(p.record->gflops()), format_number(p.record->predicted, 4)),
         3});
  }
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!by_run[r].empty())
      chart.markers(runs[r]->label, runs[r]->colour, std::move(by_run[r]));
  std::vector<Marker> crosses;
  std::vector<std::size_t> shown_failed = spread(failed.size(), options.max_points / 4);
  for (std::size_t i : shown_failed) {
    const Point& p = failed[i];
    crosses.push_back({p.x, p.y, "",
                       fmt::format("{} · trial {} · {} · score {}", runs[p.run]->label,
                                   p.record->trial, record::error_name(p.record->result.error),
                                   format_number(p.record->predicted, 4)),
                       3.5});
  }
  if (!crosses.empty())
    chart.markers("error (no time), drawn at 0", "#6e7781", std::move(crosses), Shape::Cross);
  b += chart.render();
  if (shown.size() < valid.size())
    b += sampled_note(shown.size(), valid.size(), "measured configs with a score");
  if (shown_failed.size() < failed.size())
    b += sampled_note(shown_failed.size(), failed.size(), "failed configs with a score");

  // Per run (pooled over tasks) and, with several tasks, per task.
  std::vector<std::vector<double>> rx(runs.size()), ry(runs.size());
  for (const Point& p : valid) {
    rx[p.run].push_back(p.x);
    ry[p.run].push_back(p.y);
  }
  std::vector<std::vector<std::string>> run_rows;
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!rx[r].empty())
      run_rows.push_back({run_cell(*runs[r]), format_count(static_cast<long long>(rx[r].size())),
                          rho_text(spearman(rx[r], ry[r]))});
  b += table({"run", "#configs with a score", "#Spearman ρ"}, run_rows);
  if (task_rows.size() > 1)
    b += table({"task", "#configs with a score", "#Spearman ρ"}, task_rows);
  return sec;
}

} // namespace kiln::report
