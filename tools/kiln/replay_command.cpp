// kiln replay: rebuild, check and re-time the best configs of logs.
#include "command.h"
#include "common.h"

#include "kiln/codegen/target.h"
#include "kiln/measure/replay.h"
#include "kiln/record/history.h"

#include <fmt/format.h>

#include <memory>

namespace kiln::tool {

namespace {
struct ReplayFlags {
  std::vector<std::string> logs;
  std::string task;
  measure::MeasureOptions options;
};
} // namespace

static int run(const ReplayFlags& f) {
  auto log = load_logs_verbose(f.logs);
  if (!log)
    return fail(log.error());
  Target target = codegen::host_target();
  int failures = 0, replayed = 0;
  for (const record::Record* best : record::best_per_task(log->records)) {
    if (!f.task.empty() && best->task.workload_key != f.task)
      continue;
    record::TargetMatch matched = record::TargetMatch::Exact;
    const record::Record* pick =
        record::history_best(log->records, best->task.workload_key, target, &matched);
    if (pick != best)
      continue; // one replay per task: the best for this machine
    ++replayed;
    if (matched != record::TargetMatch::Exact)
      fmt::print("{} ({}): no record of this CPU ({}); replaying the best of {}, whose logged "
                 "figure was measured there and does not compare with this machine's\n",
                 best->task.op_name, best->task.workload_key, target.cpu, best->target.cpu);
    auto result = measure::replay(*best, target, f.options);
    if (!result)
      return fail(result.error());
    double gflops = result->ok() ? best->task.flops / result->median() / 1e9 : 0;
    fmt::print(
        "{} ({}): logged {:.2f} GFLOPS at trial {} on {}; now, on {}: {}\n", best->task.op_name,
        best->task.workload_key, best->gflops(), best->trial, best->target.cpu, target.cpu,
        result->ok()
            ? fmt::format("{:.2f} GFLOPS, {:.4f} ms, answer ok", gflops, result->median() * 1e3)
            : fmt::format("{}: {}", record::error_name(result->error), result->message));
    failures += result->ok() ? 0 : 1;
  }
  if (replayed == 0)
    return fail(Error("no-such-task", f.task.empty() ? "the logs hold no valid record to replay"
                                                     : fmt::format("the logs hold no valid record "
                                                                   "of task '{}'; `kiln best` "
                                                                   "lists the tasks",
                                                                   f.task)));
  return failures ? 1 : 0;
}

Command add_replay_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<ReplayFlags>();
  CLI::App* cmd = app.add_subcommand("replay", "rebuild, check and re-time the best configs");
  cmd->add_option("logs", f->logs, "tuning logs (JSON lines)")->required();
  cmd->add_option("--task", f->task, "only this workload key");
  cmd->add_option("--timeout", f->options.runner.timeout_seconds, "seconds per candidate")
      ->capture_default_str();
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
