// kiln report: an HTML report of tuning logs.
#include "command.h"
#include "common.h"

#include "kiln/report/report.h"

#include <fmt/format.h>

#include <cstdlib>
#include <memory>

namespace kiln::tool {

namespace {
struct ReportFlags {
  std::vector<std::string> logs, baselines;
  std::string out = "report.html";
};
} // namespace

static int run(const ReportFlags& f, const ToolContext& ctx) {
  report::ReportOptions options;
  options.command = ctx.command_line;
  for (const std::string& b : f.baselines) {
    auto eq = b.find('=');
    char* end = nullptr;
    double g = eq == std::string::npos ? 0 : std::strtod(b.c_str() + eq + 1, &end);
    if (eq == std::string::npos || !end || *end != '\0')
      return fail(Error("bad-option", fmt::format("--baseline {}: write LABEL=GFLOPS", b)));
    options.baselines.push_back({b.substr(0, eq), g, ""});
  }
  if (auto err = report::write_report(f.logs, f.out, options))
    return fail(*err);
  fmt::print("report written to {}\n", f.out);
  return 0;
}

Command add_report_command(CLI::App& app, const ToolContext& ctx) {
  auto f = std::make_shared<ReportFlags>();
  CLI::App* cmd = app.add_subcommand("report", "draw an HTML report of tuning logs");
  cmd->add_option("logs", f->logs, "tuning logs (JSON lines)")->required();
  cmd->add_option("-o,--output", f->out, "the HTML file")->capture_default_str();
  cmd->add_option("--baseline", f->baselines, "a library baseline LABEL=GFLOPS (repeatable)");
  return {cmd, [f, &ctx] { return run(*f, ctx); }};
}

} // namespace kiln::tool
