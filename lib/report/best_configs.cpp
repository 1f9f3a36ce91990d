// The best configs of each task: a table, then each config's schedule file
// (ready for `kiln run --schedule`) and, when it still replays, its loop nest.
#include "sections.h"

#include "kiln/record/history.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace kiln::report {

namespace {

std::string decisions(const record::Config& c) {
  if (!c.template_name.empty()) {
    std::string s = c.template_name;
    for (const auto& [knob, choice] : c.knobs)
      s += fmt::format(" {}={}", knob, choice);
    return s;
  }
  if (c.point.empty())
    return c.steps.empty() ? "naive schedule" : fmt::format("{} steps", c.steps.size());
  std::string s = "point [";
  for (std::size_t i = 0; i < c.point.size(); ++i)
    s += fmt::format("{}{}", i ? ", " : "", c.point[i]);
  return s + "]";
}

/// The best `n` valid records with distinct configs, in the order `kiln
/// best` judges them (record::ranked_configs: configs timed more than once
/// first, each by the median of its timings).
std::vector<const record::Record*> top(const TaskView& task, std::size_t n) {
  std::vector<const record::Record*> out;
  for (const record::Record* r : record::ranked_configs(task.records)) {
    if (out.size() >= n)
      break;
    out.push_back(r); // one record per program
  }
  return out;
}

/// How many valid timings each config has (confirmed configs: several).
std::map<schedule::ProgramKey, int> timings_per_config(const TaskView& task) {
  std::map<schedule::ProgramKey, int> n;
  for (const record::Record* r : task.records)
    if (auto program = r->config.program(); program && r->result.ok())
      ++n[*program];
  return n;
}

std::string loop_nest(const ir::ComputeDAG& dag, const record::Record& r) {
  if (r.config.steps.empty() && !r.config.template_name.empty())
    return ""; // an old template record: its knobs need the template to become steps
  auto state = schedule::State::replay(dag, r.config.steps);
  if (!state)
    return "(does not replay on this kiln: " + state.error().message() + ")";
  return schedule::to_string(schedule::lower(*state));
}

} // namespace

Section best_configs_section(const LogView& view, const ReportOptions& options) {
  Section sec{"best-configs", fmt::format("The {} best configs", options.top), ""};
  std::string& b = sec.body;
  bool any = false;
  for (std::size_t t = 0; t < view.tasks.size() && t < kMaxTaskCharts; ++t) {
    const TaskView& task = view.tasks[t];
    std::vector<const record::Record*> best =
        top(task, static_cast<std::size_t>(std::max(options.top, 0)));
    if (best.empty())
      continue;
    any = true;
    b += task_heading(view, task);
    double top_gflops = best.front()->gflops();
    std::map<schedule::ProgramKey, int> timings = timings_per_config(task);
    std::vector<std::vector<std::string>> rows;
    for (std::size_t i = 0; i < best.size(); ++i) {
      const record::Record& r = *best[i];
      rows.push_back({std::to_string(i + 1), format_number(r.gflops()),
                      fmt::format("{:.1f}%", 100 * r.gflops() / top_gflops),
                      format_seconds(r.result.median()), format_count(timings[*r.config.program()]),
                      escape(r.run), format_count(r.trial), escape(decisions(r.config))});
    }
    b += table(
        {"#rank", "#GFLOPS", "#of best", "#median time", "#timings", "run", "#trial", "decisions"},
        rows);
    if (timings[*best.front()->config.program()] > 1)
      b += note("Configs timed more than once (the tuner's confirmation of its best) rank "
                "first, by the median of their timings: they were timed in turn, in the same "
                "minutes, while one timing of another config may have caught the machine in a "
                "faster moment.");
    std::optional<ir::ComputeDAG> dag;
    if (options.loop_nests)
      if (auto d = record::task_dag(best.front()->task))
        dag = std::move(*d);
    for (std::size_t i = 0; i < best.size(); ++i) {
      const record::Record& r = *best[i];
      // The best one is open: what a user came for, visible without a click.
      b += fmt::format("<details{}><summary>#{} · {} GFLOPS · trial {} of {}</summary>\n",
                       i == 0 ? " open" : "", i + 1, format_number(r.gflops()), r.trial,
                       escape(r.run));
      if (!r.config.template_name.empty())
        b += "<pre>" + escape(decisions(r.config)) + "</pre>\n";
      if (!r.config.steps.empty() || r.config.template_name.empty()) {
        b += "<p class=\"note\">Schedule file (for <code>kiln run --schedule</code>):</p>\n";
        b += "<pre>" + escape(schedule::schedule_file_text(r.task.op_name, r.config.steps)) +
             "</pre>\n";
      }
      if (dag) {
        std::string nest = loop_nest(*dag, r);
        if (!nest.empty())
          b += "<p class=\"note\">Loop nest:</p>\n<pre>" + escape(nest) + "</pre>\n";
      }
      b += "</details>\n";
    }
  }
  if (!any)
    b += note("No config has a valid time yet.");
  b += more_tasks_note(view);
  return sec;
}

} // namespace kiln::report
