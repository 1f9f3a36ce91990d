// render_report: the sections in reading order, from the question a user
// asks first (did it get fast?) to the details (which config, which machine).
#include "kiln/report/report.h"

#include "log_view.h"
#include "sections.h"

#include "kiln/support/output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace kiln::report {

std::string render_report(const record::LoadedLog& log, const ReportOptions& options) {
  LogView view = make_view(log, options);
  std::vector<Section> sections = {
      tuning_curve_section(view, options), pipeline_section(view, options),
      cost_model_section(view, options),   search_space_section(view, options),
      modes_section(view, options),        errors_section(view, options),
      best_configs_section(view, options), machine_section(log),
      command_section(log, options),
  };
  if (!log.networks.empty())
    sections.insert(sections.begin(), network_section(log, options));
  return page(options.title, summary(view, log, options), sections);
}

std::optional<Error> write_report(const record::LoadedLog& log, const std::string& output,
                                  const ReportOptions& options) {
  std::string html = render_report(log, options);
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (out)
    out.write(html.data(), static_cast<std::streamsize>(html.size()));
  if (out)
    out.close();
  if (!out)
    return Error("cannot-write-report",
                 fmt::format("cannot write the report to '{}': {}", output, std::strerror(errno)));
  return std::nullopt;
}

std::optional<Error> write_report(const std::vector<std::string>& logs, const std::string& output,
                                  ReportOptions options) {
  if (auto err = check_output_file(output, logs, "the report"))
    return err;
  auto log = record::load_logs(logs);
  if (!log)
    return log.error();
  if (options.sources.empty())
    options.sources = logs;
  return write_report(*log, output, options);
}

} // namespace kiln::report
