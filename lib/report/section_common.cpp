#include "sections.h"

#include <fmt/format.h>

namespace kiln::report {

std::string task_heading(const LogView& view, const TaskView& task) {
  if (view.tasks.size() < 2)
    return "";
  return fmt::format("<h3>{} <span class=\"note\">{}</span></h3>\n", escape(task.name()),
                     escape(task.key));
}

std::string sampled_note(std::size_t shown, std::size_t total, const std::string& what,
                         const std::string& chart) {
  return fmt::format("<p class=\"sampled\">Sampled: {} draws {} of {} {}, evenly spaced in log "
                     "order (the same ones every time); the numbers on this page use all of "
                     "them.</p>\n",
                     escape(chart), format_count(static_cast<long long>(shown)),
                     format_count(static_cast<long long>(total)), escape(what));
}

std::string more_tasks_note(const LogView& view) {
  if (view.tasks.size() <= kMaxTaskCharts)
    return "";
  return note(fmt::format("Charts for the first {} of {} tasks; the tables cover every task.",
                          kMaxTaskCharts, view.tasks.size()));
}

std::string speedup(const record::Record* best, const record::Record* naive) {
  if (!best || !naive || naive->gflops() <= 0)
    return "–";
  return format_number(best->gflops() / naive->gflops()) + "×";
}

std::string run_cell(const RunView& run) {
  return fmt::format("<span class=\"run\"><span class=\"swatch\" style=\"background:{}\"></span>{}"
                     "</span>",
                     run.colour, escape(run.label));
}

} // namespace kiln::report
