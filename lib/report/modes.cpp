// Online vs offline vs hybrid: each run's final speed, tuning time and
// measurements side by side. The mode is the first part of the run label
// ("online/evolutionary/seed=1"), as `kiln tune` and `kiln compare` write it.
#include "sections.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::report {

namespace {

/// A horizontal bar chart, one bar per run (first run on top).
std::string bars(const std::string& id, const std::string& title, const std::string& unit,
                 const std::vector<const RunView*>& runs, double (*value)(const RunView&),
                 std::string (*text)(double)) {
  std::vector<std::string> labels;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    labels.push_back((*it)->label);
  int height = 86 + 30 * static_cast<int>(runs.size());
  SvgChart c(id, title, linear_axis(unit), ordinal_axis("", labels), 420, height);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    double y = static_cast<double>(runs.size() - 1 - i);
    double v = value(*runs[i]);
    c.rect(0, v, y - 0.32, y + 0.32, runs[i]->colour,
           fmt::format("{}: {}", runs[i]->label, text(v)));
  }
  return c.render();
}

double gflops(const RunView& r) {
  return r.best ? r.best->gflops() : 0;
}
double seconds(const RunView& r) {
  return r.seconds;
}
double measured(const RunView& r) {
  return static_cast<double>(r.records.size());
}
std::string gflops_text(double v) {
  return format_number(v) + " GFLOPS";
}
std::string count_text(double v) {
  return format_count(static_cast<long long>(v));
}

} // namespace

Section modes_section(const LogView& view, const ReportOptions&) {
  Section sec{"modes", "Online vs offline vs hybrid", ""};
  std::string& b = sec.body;
  b += note("Online measures every round and retrains the model; offline only predicts with a "
            "model trained beforehand and measures at most its final picks; hybrid lets the "
            "model filter the space to a short list and measures that. The mode is the first "
            "part of the run label. Tuning time is the tuner's own clock when the log has "
            "round lines, else the span of the record timestamps.");
  std::vector<std::vector<std::string>> rows;
  std::string charts;
  for (std::size_t t = 0; t < view.tasks.size(); ++t) {
    const TaskView& task = view.tasks[t];
    std::vector<const RunView*> runs;
    for (const RunView& r : task.runs)
      if (!r.records.empty())
        runs.push_back(&r);
    if (runs.empty())
      continue;
    std::stable_sort(runs.begin(), runs.end(), [](const RunView* a, const RunView* b) {
      return mode_order(a->mode) < mode_order(b->mode);
    });
    for (const RunView* r : runs) {
      const record::Record* naive = r->naive ? r->naive : task.naive;
      std::vector<std::string> row;
      if (view.tasks.size() > 1)
        row.push_back(escape(task.name()));
      row.insert(row.end(),
                 {escape(r->mode), run_cell(*r), r->best ? format_number(r->best->gflops()) : "–",
                  speedup(r->best, naive), format_seconds(r->seconds),
                  format_count(static_cast<long long>(r->records.size())),
                  format_count(r->errors)});
      rows.push_back(std::move(row));
    }
    if (t >= kMaxTaskCharts)
      continue;
    std::string id = fmt::format("modes-{}", t);
    charts += task_heading(view, task);
    charts += "<div class=\"charts three\">\n";
    charts += bars(id + "-gflops", "Final speed", "best GFLOPS (higher is better)", runs, gflops,
                   gflops_text);
    charts += bars(id + "-time", "Tuning time", "seconds (lower is cheaper)", runs, seconds,
                   format_seconds);
    charts +=
        bars(id + "-trials", "Measurements spent", "configs measured", runs, measured, count_text);
    charts += "</div>\n";
  }
  if (rows.empty()) {
    b += note("The log has no measured config: nothing to compare.");
    return sec;
  }
  std::vector<std::string> headers;
  if (view.tasks.size() > 1)
    headers.push_back("task");
  headers.insert(headers.end(), {"mode", "run", "#best GFLOPS", "#vs naive", "#tuning time",
                                 "#measured", "#errors"});
  b += table(headers, rows);
  b += charts;
  b += more_tasks_note(view);
  return sec;
}

} // namespace kiln::report
