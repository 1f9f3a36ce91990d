// The command that produced the log, the files read, and what could not be
// read from them.
#include "sections.h"

#include <fmt/format.h>

namespace kiln::report {

namespace {
constexpr std::size_t kMaxWarnings = 20;
}

Section command_section(const record::LoadedLog& log, const ReportOptions& options) {
  Section sec{"command", "Command", ""};
  std::string& b = sec.body;
  if (options.command.empty())
    b += note("The command that produced the log was not given to the report.");
  else
    b += "<pre class=\"wrap\">" + escape(options.command) + "</pre>\n";
  if (!options.sources.empty()) {
    b += "<p>Read from:</p>\n<ul>\n";
    for (const std::string& s : options.sources)
      b += "<li><code>" + escape(s) + "</code></li>\n";
    b += "</ul>\n";
  }
  b +=
      note(fmt::format("{} lines: {} records, {} round lines, {} skipped.", format_count(log.lines),
                       format_count(static_cast<long long>(log.records.size())),
                       format_count(static_cast<long long>(log.rounds.size())),
                       format_count(static_cast<long long>(log.warnings.size()))));
  if (!log.warnings.empty()) {
    b += "<div class=\"warn\">Skipped lines:<pre class=\"wrap\">";
    for (std::size_t i = 0; i < log.warnings.size() && i < kMaxWarnings; ++i)
      b += escape(log.warnings[i]) + "\n";
    if (log.warnings.size() > kMaxWarnings)
      b += fmt::format("… and {} more\n", log.warnings.size() - kMaxWarnings);
    b += "</pre></div>\n";
  }
  return sec;
}

} // namespace kiln::report
