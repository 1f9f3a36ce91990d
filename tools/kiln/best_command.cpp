// kiln best: the best config of every task in logs, or tuning curves.
#include "command.h"
#include "common.h"
#include "output.h"

#include "kiln/record/history.h"
#include "kiln/record/tuning_curve.h"

#include <fmt/format.h>

#include <memory>

namespace kiln::tool {

namespace {
struct BestFlags {
  std::vector<std::string> logs;
  std::vector<std::int64_t> curve;
};
} // namespace

static int run(const BestFlags& f) {
  auto log = load_logs_verbose(f.logs);
  if (!log)
    return fail(log.error());
  if (!f.curve.empty()) {
    fmt::print("{}", curve_table(record::tuning_curves(*log, f.curve)));
    return 0;
  }
  std::vector<const record::Record*> best = record::best_per_task(log->records);
  fmt::print("{} records, {} tasks with a valid config\n", log->records.size(), best.size());
  fmt::print("{}", best_table(best));
  return 0;
}

Command add_best_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<BestFlags>();
  CLI::App* cmd = app.add_subcommand("best", "list the best config of every task in logs");
  cmd->add_option("logs", f->logs, "tuning logs (JSON lines)")->required();
  cmd->add_option("--curve", f->curve,
                  "instead: the best GFLOPS and seconds of every run after these numbers of "
                  "trials, e.g. --curve 50,100,200")
      ->delimiter(',');
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
