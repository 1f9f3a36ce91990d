// kiln tune: find the fastest correct kernel for an operator.
#include "command.h"
#include "common.h"
#include "output.h"
#include "tune_flags.h"
#include "tune_model.h"

#include "kiln/cluster/job.h"
#include "kiln/codegen/target.h"
#include "kiln/search/session.h"
#include "kiln/support/output_file.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <unistd.h>

namespace kiln::tool {

static int run_here(CLI::App* cmd, TuneFlags& f, const std::string& scheduler,
                    const ToolContext& ctx) {
  if (f.op.file.size() > 5 && f.op.file.compare(f.op.file.size() - 5, 5, ".onnx") == 0)
    return tune_model(cmd, f, scheduler, ctx);
  auto options = session_options(cmd, f, ctx);
  if (!options)
    return fail(options.error());
  auto dag = load_op(f.op);
  if (!dag)
    return fail(dag.error());
  Target target = codegen::host_target();
  auto session = search::TuningSession::create(*dag, target, *options);
  if (!session)
    return fail(session.error());
  for (const std::string& w : (*session)->warnings())
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  fmt::print("tuning {} ({}) on {} {}: {} space, {} mode, {} strategy, {} trials, log {}\n",
             dag->name(), dag->workload_key(), target.cpu, target.triple,
             space_text((*session)->space()), f.mode, f.options.strategy, f.options.trials,
             (*session)->log_path());
  for (const std::string& n : (*session)->notes())
    fmt::print("{}\n", n);
  // Found now, not after the run: a report that would replace an input or
  // cannot be written.
  if (!f.report.empty())
    if (auto err = check_output_file(f.report, {(*session)->log_path(), f.op.file, f.op.schedule},
                                     "the report"))
      return fail(*err);
  bool tty = ::isatty(STDOUT_FILENO);
  std::int64_t errors = 0;
  auto result = (*session)->run([&](const search::RoundStats& r) {
    errors += r.errors;
    fmt::print("{}", progress_line(r, f.options.trials, errors, tty));
    std::fflush(stdout);
  });
  if (tty)
    fmt::print("\n");
  if (!result)
    return fail(result.error());
  if (result->offline_pick)
    fmt::print("offline pick (predicted score {:.3f}) written to {}\n",
               result->tune.predicted_score, result->schedule_file);
  fmt::print("{}", summary(result->tune, op_command(f.op), result->schedule_file, result->log));
  if (auto err = write_run_report(result->log, f.report, ctx))
    return fail(*err);
  return result->tune.best || f.options.mode == search::Mode::Offline ? 0 : 1;
}

/// A cluster job's --retrain-growth unless one is given.
constexpr double kJobRetrainGrowth = 0.3;

/// Under mpirun: rank 0 tunes as run_here does, every batch measured over
/// the ranks (cluster/job.h); the other ranks measure for it.
static int run_on_cluster(CLI::App* cmd, TuneFlags& f, const std::string& scheduler,
                          const ToolContext& ctx) {
  auto transport = cluster::join_mpi_job();
  if (!transport)
    return fail(transport.error());
  cluster::Transport& t = **transport;
  if (t.size() == 1)
    return run_here(cmd, f, scheduler, ctx);
  auto options = session_options(cmd, f, ctx);
  if (!options)
    return t.rank() == 0 ? fail(options.error()) : 1;
  const measure::MeasurerFactory base =
      options->make_measurer ? options->make_measurer : measure::make_program_measurer;
  auto code = cluster::run_job(
      t, codegen::host_target(), options->measure, base,
      [&](const measure::MeasurerFactory& distributed, cluster::Job& job) {
        fmt::print("cluster: {} ranks, rank 0 on {} searches; every rank measures its share of "
                   "each batch\n",
                   t.size(), t.host());
        f.make_measurer = distributed;
        // A job's batches are large and its measuring fast: the search must
        // keep up, so it proposes while a batch is measured and retrains
        // when the records grew by 30%, unless told otherwise.
        if (!f.pipeline)
          f.pipeline = true;
        if (cmd->count("--retrain-growth") == 0)
          f.options.retrain_growth = kJobRetrainGrowth;
        const int rc = run_here(cmd, f, scheduler, ctx);
        for (const std::string& e : job.events())
          std::fprintf(stderr, "warning: %s\n", e.c_str());
        return rc;
      });
  if (code)
    return *code;
  if (t.rank() == 0)
    return fail(code.error());
  std::fprintf(stderr, "kiln (rank %d of the job): %s\n", t.rank(), code.error().message().c_str());
  return 1;
}

static int run(CLI::App* cmd, TuneFlags& f, const std::string& scheduler, const ToolContext& ctx) {
  if (cluster::started_by_mpi_launcher())
    return run_on_cluster(cmd, f, scheduler, ctx);
  return run_here(cmd, f, scheduler, ctx);
}

Command add_tune_command(CLI::App& app, const ToolContext& ctx) {
  auto f = std::make_shared<TuneFlags>();
  auto scheduler = std::make_shared<std::string>("gradient");
  CLI::App* cmd = app.add_subcommand(
      "tune", "find the fastest correct kernel for an operator, or for every task of a model "
              "(.onnx)");
  add_op_options(cmd, f->op,
                 "a schedule file to start from (a backend's own, a hand-written one): measured "
                 "first, in the race for the best (docs/tuning.md)");
  add_tune_flags(cmd, *f);
  cmd->add_option("--log", f->log, "tuning log (default: OPNAME.jsonl)");
  cmd->add_flag("--resume", f->resume, "continue from the log's records of this task");
  cmd->add_option("--task-scheduler", *scheduler,
                  "a model: how rounds are shared among its tasks, gradient or round-robin")
      ->capture_default_str();
  return {cmd, [cmd, f, scheduler, &ctx] { return run(cmd, *f, *scheduler, ctx); }};
}

} // namespace kiln::tool
