// The report's sections, one file each (docs/report.md describes what each
// shows). Every section renders for any log, empty included: when it has
// nothing to show it says why.
#ifndef KILN_REPORT_SECTIONS_H
#define KILN_REPORT_SECTIONS_H

#include "html.h"
#include "log_view.h"

#include "kiln/report/report.h"

#include <cstddef>
#include <string>

namespace kiln::report {

/// The block under the title: headline numbers, sources, load warnings.
std::string summary(const LogView& view, const record::LoadedLog& log,
                    const ReportOptions& options);

/// Logs of `kiln tune MODEL`: the network's estimate and its tasks.
Section network_section(const record::LoadedLog& log, const ReportOptions& options);
Section tuning_curve_section(const LogView& view, const ReportOptions& options);
Section pipeline_section(const LogView& view, const ReportOptions& options);
Section cost_model_section(const LogView& view, const ReportOptions& options);
Section search_space_section(const LogView& view, const ReportOptions& options);
Section modes_section(const LogView& view, const ReportOptions& options);
Section errors_section(const LogView& view, const ReportOptions& options);
Section best_configs_section(const LogView& view, const ReportOptions& options);
Section machine_section(const record::LoadedLog& log);
Section command_section(const record::LoadedLog& log, const ReportOptions& options);

// Shared by the sections.

/// An <h3> naming the task when the log has several (nothing otherwise).
std::string task_heading(const LogView& view, const TaskView& task);
/// The note under a chart that draws a subset of its points.
std::string sampled_note(std::size_t shown, std::size_t total, const std::string& what,
                         const std::string& chart = "the chart above");
/// The note when a section drew only the first kMaxTaskCharts tasks.
std::string more_tasks_note(const LogView& view);
/// "12.5×": how many times faster `best` is than `naive`; "–" without both.
std::string speedup(const record::Record* best, const record::Record* naive);
/// "<span class=swatch> label" for tables.
std::string run_cell(const RunView& run);

} // namespace kiln::report

#endif
