// kiln compare: online vs offline vs hybrid on one budget.
#include "command.h"
#include "common.h"
#include "tune_flags.h"

#include "kiln/codegen/target.h"
#include "kiln/search/session.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace kiln::tool {

static int run(CLI::App* cmd, TuneFlags& f, const ToolContext& ctx) {
  auto options = session_options(cmd, f, ctx);
  if (!options)
    return fail(options.error());
  auto dag = load_op(f.op);
  if (!dag)
    return fail(dag.error());
  auto comparison =
      search::compare_modes(*dag, codegen::host_target(), *options, [](search::Mode mode) {
        fmt::print("{} ...\n", search::mode_name(mode));
        std::fflush(stdout);
      });
  if (!comparison)
    return fail(comparison.error());
  double best = 0;
  for (const search::ModeRun& r : comparison->runs)
    best = std::max(best, r.result.best ? r.result.best->gflops() : 0.0);
  fmt::print("\n{} ({}), {} trials each, log {}\n", dag->name(), params_text(*dag),
             f.options.trials, comparison->log);
  fmt::print("{:<8} {:>9} {:>9} {:>10} {:>13} {:>10}\n", "mode", "GFLOPS", "vs best", "time (s)",
             "measurements", "model acc");
  for (const search::ModeRun& r : comparison->runs) {
    double g = r.result.best ? r.result.best->gflops() : 0;
    fmt::print("{:<8} {:>9.2f} {:>9.2f} {:>10.1f} {:>13} {:>10}\n", search::mode_name(r.mode), g,
               best > 0 ? g / best : 0, r.result.seconds, r.result.trials + r.result.confirmations,
               r.accuracy >= 0 ? fmt::format("{:.2f}", r.accuracy) : std::string("-"));
  }
  if (auto err = write_run_report(comparison->log, f.report, ctx))
    return fail(*err);
  fmt::print("model acc: pairwise ranking accuracy on measured configs (online: per round, before "
             "each update; offline: the pretrained model on the online run's measurements; "
             "hybrid: on its short list)\n");
  return 0;
}

Command add_compare_command(CLI::App& app, const ToolContext& ctx) {
  auto f = std::make_shared<TuneFlags>();
  f->options.trials = 64;
  CLI::App* cmd = app.add_subcommand("compare", "online vs offline vs hybrid on one budget");
  add_op_options(cmd, f->op, "");
  add_tune_flags(cmd, *f);
  cmd->add_option("--log", f->log, "log of the three runs (default: OPNAME.compare.jsonl)");
  return {cmd, [cmd, f, &ctx] { return run(cmd, *f, ctx); }};
}

} // namespace kiln::tool
