// The online pipeline, round by round, from the log's round lines: how many
// configs the model scored, how many were proposed and measured, the
// model's ranking accuracy on each batch before it retrained on it, and the
// time each stage took.
#include "sections.h"
#include "stats.h"
#include "svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kiln::report {

namespace {

constexpr std::size_t kMaxRunCharts = 6;      ///< per task
constexpr std::size_t kMaxBars = 120;         ///< more rounds are grouped
constexpr std::size_t kMaxRoundPoints = 1000; ///< per line; more rounds are sampled
constexpr std::size_t kMaxRoundMarkers = 200; ///< accuracy dots; group means past that

const char* const kStageColours[] = {"#0072B2", "#D55E00", "#009E73"};

bool has_accuracy(const record::RoundRecord& r) {
  return std::isfinite(r.model_accuracy) && r.model_accuracy >= 0 && r.model_accuracy <= 1;
}

/// Online rounds log the predictions made in the round; offline and hybrid
/// ones log the running total.
std::int64_t predictions(const RunView& run) {
  std::int64_t sum = 0, max = 0;
  for (const record::RoundRecord* r : run.rounds) {
    sum += r->predicted;
    max = std::max(max, r->predicted);
  }
  return run.mode == "online" ? sum : max;
}

std::string counts_chart(const std::string& id, const RunView& run) {
  SvgChart c(id, "Configs per round", linear_axis("round"), log_axis("configs (log scale)"), 420,
             320);
  struct Series {
    const char* name;
    std::int64_t record::RoundRecord::*field;
    const char* colour;
    bool dashed;
  };
  // "proposed" is dashed and drawn over "measured": usually they are equal.
  const Series series[] = {
      {"scored by the model", &record::RoundRecord::predicted, "#8250df", false},
      {"measured", &record::RoundRecord::measured, "#009E73", false},
      {"proposed", &record::RoundRecord::sampled, "#0072B2", true}};
  for (const Series& s : series) {
    std::vector<XY> pts;
    for (std::size_t i : spread(run.rounds.size(), kMaxRoundPoints))
      if (run.rounds[i]->*s.field > 0) // zero has no place on a log axis
        pts.push_back({static_cast<double>(i + 1), static_cast<double>(run.rounds[i]->*s.field)});
    if (!pts.empty())
      c.line(s.name, s.colour, std::move(pts), false, s.dashed);
  }
  // Errors are dots: most rounds have none, which a log axis cannot show,
  // and a line would join the rounds that have some as if it could.
  std::vector<Marker> errors;
  for (std::size_t i : spread(run.rounds.size(), kMaxRoundPoints))
    if (run.rounds[i]->errors > 0)
      errors.push_back({static_cast<double>(i + 1), static_cast<double>(run.rounds[i]->errors), "",
                        fmt::format("round {}: {} errors", i + 1, run.rounds[i]->errors), 3});
  if (!errors.empty())
    c.markers("errors (rounds with any)", "#D55E00", std::move(errors));
  return c.render();
}

std::string accuracy_chart(const std::string& id, const RunView& run) {
  Axis y = linear_axis("pairwise ranking accuracy (1 = perfect)");
  y.min = 0;
  y.max = 1;
  SvgChart c(id, "Model accuracy before each update", linear_axis("round"), y, 420, 320);
  // Each round's accuracy, with a dot per round while they stay apart; on a
  // long run, the mean of each group of rounds, which a zigzag of thousands
  // of rounds would hide.
  std::size_t n = run.rounds.size();
  std::size_t group = n <= kMaxRoundMarkers ? 1 : (n + kMaxRoundMarkers - 1) / kMaxRoundMarkers;
  std::vector<XY> pts;
  std::vector<Marker> marks;
  for (std::size_t first = 0; first < n; first += group) {
    double sum = 0;
    int count = 0;
    for (std::size_t i = first; i < std::min(n, first + group); ++i)
      if (has_accuracy(*run.rounds[i])) {
        sum += run.rounds[i]->model_accuracy;
        ++count;
      }
    if (count == 0)
      continue;
    pts.push_back({static_cast<double>(first + 1), sum / count});
    if (group == 1)
      marks.push_back({pts.back().x, pts.back().y, "",
                       fmt::format("round {}: {:.2f} on {} configs", first + 1, pts.back().y,
                                   run.rounds[first]->measured),
                       2.5});
  }
  if (pts.empty()) // the strategy ignores the model, or it never trained
    return "<div class=\"empty\">No model accuracy in this run's round lines: its strategy does "
           "not use the cost model, or the model had not trained yet.</div>\n";
  c.line(group == 1 ? std::string("accuracy on the new batch")
                    : fmt::format("mean accuracy of each {} rounds", group),
         run.colour, std::move(pts));
  c.markers("", run.colour, std::move(marks));
  c.hline(0.5, "chance", "#8c959f", false);
  return c.render();
}

std::string stages_chart(const std::string& id, const RunView& run) {
  std::size_t n = run.rounds.size();
  std::size_t group = (n + kMaxBars - 1) / kMaxBars;
  std::string y_label = group > 1 ? fmt::format("seconds per round (mean of {})", group)
                                  : std::string("seconds per round");
  Axis x = linear_axis("round");
  x.min = 0.5; // bars are centred on their round
  x.max = static_cast<double>(n) + 0.5;
  SvgChart c(id, "Time per stage", x, linear_axis(y_label), 420, 320);
  const char* names[] = {"sample + predict", "measure", "update (retrain)"};
  for (int s = 0; s < 3; ++s)
    c.legend(names[s], kStageColours[s]);
  for (std::size_t first = 0; first < n; first += group) {
    std::size_t last = std::min(n, first + group); // rounds [first, last)
    double stage[3] = {0, 0, 0};
    for (std::size_t i = first; i < last; ++i) {
      stage[0] += run.rounds[i]->sample_seconds;
      stage[1] += run.rounds[i]->measure_seconds;
      stage[2] += run.rounds[i]->update_seconds;
    }
    double k = static_cast<double>(last - first);
    double x0 = static_cast<double>(first) + 0.5 + 0.1 * k,
           x1 = static_cast<double>(last) + 0.5 - 0.1 * k;
    std::string rounds = last - first > 1 ? fmt::format("rounds {}–{}", first + 1, last)
                                          : fmt::format("round {}", first + 1);
    double y = 0;
    for (int s = 0; s < 3; ++s) {
      double h = stage[s] / k;
      if (h <= 0)
        continue;
      c.rect(x0, x1, y, y + h, kStageColours[s],
             fmt::format("{}: {} {}", rounds, names[s], format_seconds(h)));
      y += h;
    }
  }
  return c.render();
}

std::string accuracy_text(const RunView& run) {
  const record::RoundRecord *first = nullptr, *last = nullptr;
  for (const record::RoundRecord* r : run.rounds)
    if (has_accuracy(*r)) {
      if (!first)
        first = r;
      last = r;
    }
  if (!first)
    return "–";
  return fmt::format("{:.2f} → {:.2f}", first->model_accuracy, last->model_accuracy);
}

} // namespace

Section pipeline_section(const LogView& view, const ReportOptions&) {
  Section sec{"pipeline", "The online pipeline", ""};
  std::string& b = sec.body;
  std::vector<std::vector<std::string>> rows;
  std::string charts;
  for (std::size_t t = 0; t < view.tasks.size(); ++t) {
    const TaskView& task = view.tasks[t];
    std::string task_charts;
    std::size_t drawn = 0;
    for (std::size_t r = 0; r < task.runs.size(); ++r) {
      const RunView& run = task.runs[r];
      if (run.rounds.empty())
        continue;
      double stage[3] = {0, 0, 0};
      std::int64_t proposed = 0, measured = 0, errors = 0;
      for (const record::RoundRecord* round : run.rounds) {
        stage[0] += round->sample_seconds;
        stage[1] += round->measure_seconds;
        stage[2] += round->update_seconds;
        proposed += round->sampled;
        measured += round->measured;
        errors += round->errors;
      }
      std::vector<std::string> row;
      if (view.tasks.size() > 1)
        row.push_back(escape(task.name()));
      row.insert(row.end(),
                 {run_cell(run), format_count(static_cast<long long>(run.rounds.size())),
                  format_count(predictions(run)), format_count(measured), format_count(errors),
                  format_seconds(stage[0]), format_seconds(stage[1]), format_seconds(stage[2]),
                  accuracy_text(run)});
      rows.push_back(std::move(row));
      // An offline run logs a single summary round: no pipeline to draw.
      if (t >= kMaxTaskCharts || run.mode == "offline" || drawn >= kMaxRunCharts)
        continue;
      ++drawn;
      std::string id = fmt::format("pipeline-{}-{}", t, r);
      task_charts += fmt::format("<h3>{}</h3>\n<div class=\"charts three\">\n", run_cell(run));
      task_charts += counts_chart(id + "-counts", run) + accuracy_chart(id + "-accuracy", run) +
                     stages_chart(id + "-stages", run);
      task_charts += "</div>\n";
      if (run.rounds.size() > kMaxRoundPoints)
        task_charts +=
            sampled_note(kMaxRoundPoints, run.rounds.size(), "rounds", "“Configs per round”");
    }
    if (!task_charts.empty())
      charts += task_heading(view, task) + task_charts;
  }
  if (rows.empty()) {
    b += note("The log has no round lines (<code>\"type\":\"round\"</code>), which <code>kiln "
              "tune</code> writes after each round: nothing to show.");
    return sec;
  }
  b += note("One online round: the strategy proposes configs ranked by the cost model (sample "
            "and predict), kiln builds and times them (measure), then retrains the model on "
            "everything measured (update). Accuracy is the share of pairs of the round's new "
            "configs that the model ranked in the right order before retraining on them; 0.5 "
            "is chance.");
  std::vector<std::string> headers;
  if (view.tasks.size() > 1)
    headers.push_back("task");
  headers.insert(headers.end(),
                 {"run", "#rounds", "#scored by the model", "#measured", "#errors",
                  "#sample + predict", "#measure", "#update", "#accuracy first → last"});
  b += table(headers, rows);
  b += charts;
  return sec;
}

} // namespace kiln::report
