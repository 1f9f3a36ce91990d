// The block under the title: the headline numbers, when and where the log
// was measured, and whether charts are sampled or lines were skipped.
#include "sections.h"

#include "kiln/support/version.h"

#include <fmt/format.h>

#include <ctime>

namespace kiln::report {

namespace {

std::string card(const std::string& value, const std::string& key) {
  return fmt::format("<div class=\"card\"><div class=\"v\">{}</div><div class=\"k\">{}</div></div>",
                     value, escape(key));
}

std::string utc(double seconds) {
  std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

} // namespace

std::string summary(const LogView& view, const record::LoadedLog& log,
                    const ReportOptions& options) {
  std::string s = "<div class=\"cards\">";
  if (view.tasks.size() == 1 && view.tasks[0].best) {
    const TaskView& task = view.tasks[0];
    s += card(format_number(task.best->gflops()), "best GFLOPS");
    if (task.naive && task.naive->gflops() > 0)
      s += card(speedup(task.best, task.naive), "faster than the naive schedule");
  }
  if (view.tasks.size() > 1)
    s += card(format_count(static_cast<long long>(view.tasks.size())), "tasks");
  s += card(format_count(static_cast<long long>(view.records)), "trials");
  s += card(format_count(static_cast<long long>(view.errors)), "failed trials");
  s += card(format_count(static_cast<long long>(view.runs)), view.runs == 1 ? "run" : "runs");
  double seconds = 0;
  for (const TaskView& task : view.tasks)
    for (const RunView& run : task.runs)
      seconds += run.seconds;
  if (seconds > 0)
    s += card(escape(format_seconds(seconds)), "tuning time");
  s += "</div>\n";

  if (view.tasks.size() == 1)
    s += fmt::format("<p>Task <b>{}</b> <span class=\"note\">{} · {} GFLOP per call</span></p>\n",
                     escape(view.tasks[0].name()), escape(view.tasks[0].key),
                     format_number(view.tasks[0].flops / 1e9, 4));
  if (view.tasks.size() > 1) {
    std::vector<std::vector<std::string>> rows;
    for (const TaskView& task : view.tasks)
      rows.push_back({escape(task.name()),
                      format_count(static_cast<long long>(task.records.size())),
                      task.best ? format_number(task.best->gflops()) : "–",
                      speedup(task.best, task.naive), "<code>" + escape(task.key) + "</code>"});
    s += table({"task", "#trials", "#best GFLOPS", "#vs naive", "workload key"}, rows);
  }
  if (view.first_time > 0)
    s += note(fmt::format("Measured from {} to {} UTC. Report by kiln {}.", utc(view.first_time),
                          utc(view.last_time), version()));
  if (view.records == 0)
    s += "<p class=\"warn\">The log has no trials: there is nothing to show yet.</p>\n";
  if (view.records > options.max_points)
    s += fmt::format("<p class=\"sampled\">This log has {} trials: each point chart draws an "
                     "evenly spaced sample of at most {} and says so under it. Every number on "
                     "the page uses all of them.</p>\n",
                     format_count(static_cast<long long>(view.records)),
                     format_count(static_cast<long long>(options.max_points)));
  if (!log.warnings.empty())
    s += fmt::format("<p class=\"warn\">{} damaged log lines were skipped (listed under <a "
                     "href=\"#command\">Command</a>).</p>\n",
                     format_count(static_cast<long long>(log.warnings.size())));
  return s;
}

} // namespace kiln::report
