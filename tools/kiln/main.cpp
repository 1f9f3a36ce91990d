// kiln: the command-line tool. Thin by design: it parses options and calls
// the library; everything it does is available to a program linking libkiln.
#include "kiln/codegen/compiler.h"
#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/replay.h"
#include "kiln/measure/run.h"
#include "kiln/measure/tuning_log.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/search/progress.h"
#include "kiln/search/tuner.h"
#include "kiln/space/sketch.h"
#include "kiln/support/error.h"
#include "kiln/support/stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace kiln;

namespace {

/// Options shared by every command that reads an op file.
struct OpOptions {
  std::string file;
  std::vector<std::string> sets;
  std::string schedule; ///< schedule file; empty for the naive schedule
};

void add_op_options(CLI::App* cmd, OpOptions& op) {
  cmd->add_option("opfile", op.file, "operator file (.kop)")->required();
  cmd->add_option("--set", op.sets, "override a parameter, NAME=VALUE (repeatable)");
  cmd->add_option("--schedule", op.schedule,
                  "schedule file (JSON steps, docs/schedule-format.md); default: naive");
}

} // namespace

static int fail(const Error& e) {
  std::fprintf(stderr, "%s\n", e.render().c_str());
  return 1;
}

static Expected<ir::ComputeDAG> load_op(const OpOptions& op) {
  ir::ParamOverrides overrides;
  for (const std::string& s : op.sets) {
    auto kv = ir::parse_override(s);
    if (!kv)
      return kv.error();
    overrides.push_back(*kv);
  }
  return ir::parse_op_file(op.file, overrides);
}

/// The op's loop nest under the chosen schedule.
static Expected<schedule::LoweredFunc> lower_op(const ir::ComputeDAG& dag, const OpOptions& op) {
  if (op.schedule.empty())
    return schedule::lower_naive(dag);
  auto steps = schedule::read_schedule_file(op.schedule);
  if (!steps)
    return steps.error();
  auto state = schedule::State::replay(dag, *steps);
  if (!state)
    return Error(state.error().id(), fmt::format("{}: {}", op.schedule, state.error().message()));
  return schedule::lower(*state);
}

static std::string params_text(const ir::ComputeDAG& dag) {
  std::string s;
  for (const ir::Param& p : dag.params())
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", p.name, p.value);
  return s;
}

static int run_command(const OpOptions& op, const measure::RunOptions& options) {
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  Stopwatch clock;
  auto func = lower_op(*dag, op);
  if (!func)
    return fail(func.error());
  double lower_ms = clock.elapsed_ms();
  codegen::Target target = codegen::Target::host();
  fmt::print("op:       {} ({})\nkey:      {}\ntarget:   {} {}, {} bits\nschedule: {}\n",
             dag->name(), params_text(*dag), dag->workload_key(), target.triple, target.cpu,
             target.vector_bits, op.schedule.empty() ? "naive" : op.schedule);
  auto report = measure::compile_and_run(*dag, *func, target, options);
  if (!report)
    return fail(report.error());
  fmt::print("{}lower:    {:.2f} ms\n", report->describe(), lower_ms);
  return report->check.passed ? 0 : 1;
}

static int dump_command(const OpOptions& op, const std::string& stage, const std::string& out) {
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  std::string text;
  if (stage == "dag") {
    text = dag->to_string();
  } else {
    auto lowered = lower_op(*dag, op);
    if (!lowered)
      return fail(lowered.error());
    const schedule::LoweredFunc& func = *lowered;
    if (stage == "loopnest") {
      text = schedule::to_string(func);
    } else {
      auto compiler = codegen::Compiler::create(codegen::Target::host());
      if (!compiler)
        return fail(compiler.error());
      codegen::DumpStage which = stage == "llvm"  ? codegen::DumpStage::LLVM
                                 : stage == "opt" ? codegen::DumpStage::Optimized
                                                  : codegen::DumpStage::Assembly;
      auto dumped = (*compiler)->dump(func, which);
      if (!dumped)
        return fail(dumped.error());
      text = *dumped;
    }
  }
  if (out.empty() || out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  std::ofstream file(out);
  file << text;
  if (!file)
    return fail(Error("cannot-write", fmt::format("cannot write '{}'; check the directory exists "
                                                  "and is writable",
                                                  out)));
  return 0;
}

/// Loads logs, printing a warning for every skipped line.
static Expected<measure::LoadedLog> load_logs_verbose(const std::vector<std::string>& paths) {
  auto log = measure::load_logs(paths);
  if (log)
    for (const std::string& w : log->warnings)
      std::fprintf(stderr, "warning: %s\n", w.c_str());
  return log;
}

static int best_command(const std::vector<std::string>& logs) {
  auto log = load_logs_verbose(logs);
  if (!log)
    return fail(log.error());
  std::vector<const measure::Record*> best = measure::best_per_task(log->records);
  fmt::print("{} records, {} tasks with a valid config\n", log->records.size(), best.size());
  fmt::print("{}", measure::best_table(best));
  return 0;
}

static int replay_command(const std::vector<std::string>& logs, const std::string& task,
                          const measure::MeasureOptions& options) {
  auto log = load_logs_verbose(logs);
  if (!log)
    return fail(log.error());
  codegen::Target target = codegen::Target::host();
  int failures = 0, replayed = 0;
  for (const measure::Record* best : measure::best_per_task(log->records)) {
    if (!task.empty() && best->task.workload_key != task)
      continue;
    const measure::Record* pick =
        measure::history_best(log->records, best->task.workload_key, target);
    if (pick != best)
      continue; // one replay per task: the best for this machine
    ++replayed;
    auto result = measure::replay(*best, target, options);
    if (!result)
      return fail(result.error());
    double gflops = result->ok() ? best->task.flops / result->median() / 1e9 : 0;
    fmt::print(
        "{} ({}): logged {:.2f} GFLOPS at trial {}; now {}\n", best->task.op_name,
        best->task.workload_key, best->gflops(), best->trial,
        result->ok()
            ? fmt::format("{:.2f} GFLOPS, {:.4f} ms, answer ok", gflops, result->median() * 1e3)
            : fmt::format("{}: {}", measure::error_name(result->error), result->message));
    failures += result->ok() ? 0 : 1;
  }
  if (replayed == 0)
    return fail(Error("no-such-task", task.empty() ? "the logs hold no valid record to replay"
                                                   : fmt::format("the logs hold no valid record "
                                                                 "of task '{}'; `kiln best` lists "
                                                                 "the tasks",
                                                                 task)));
  return failures ? 1 : 0;
}

static space::SpaceParams space_params(const codegen::Target& target) {
  space::SpaceParams p;
  p.vector_lanes = target.vector_lanes(ir::ScalarType::F32);
  p.cores = target.cores;
  return p;
}

static int space_command(const OpOptions& op, bool sketches, int samples, std::uint64_t seed) {
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  space::SketchSpace sp(*dag, space_params(codegen::Target::host()));
  if (sketches || samples <= 0) {
    fmt::print("{} sketches for {}\n\n{}", sp.sketches().size(), dag->name(), sp.describe());
    if (samples <= 0)
      return 0;
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < samples; ++i) {
    space::SketchConfig c = sp.sample(rng);
    fmt::print("config {} (sketch {}): {}\n", i, c.sketch, schedule::steps_to_json(sp.steps(c)));
  }
  return 0;
}

/// Everything `kiln tune` and `kiln compare` take besides the op.
struct TuneFlags {
  search::TuneOptions options;
  std::string mode = "online";
  std::string log;
  bool resume = false;
  std::string model_file;
  std::string save_model;
  std::vector<std::string> strategy_options;
  double timeout = 10;
  bool no_isolate = false;
  int threads = 0;
};

static void add_tune_flags(CLI::App* cmd, TuneFlags& f) {
  auto& o = f.options;
  cmd->add_option("--trials", o.trials, "measurement budget")->capture_default_str();
  cmd->add_option("--time-budget", o.time_budget_seconds, "seconds for the whole run (0: none)")
      ->capture_default_str();
  cmd->add_option("--strategy", o.strategy, "evolutionary | annealing | genetic | random | grid")
      ->capture_default_str();
  cmd->add_option("--mode", f.mode, "online | offline | hybrid")->capture_default_str();
  cmd->add_option("--batch", o.batch, "configs measured per round")->capture_default_str();
  cmd->add_option("--seed", o.seed, "random seed")->capture_default_str();
  cmd->add_option("--early-stop", o.early_stop, "stop after N trials without improvement (0: off)")
      ->capture_default_str();
  cmd->add_option("--verify-top", o.verify_top, "offline: measure the K best picks")
      ->capture_default_str();
  cmd->add_option("--measure-fraction", o.measure_fraction,
                  "hybrid: share of --time-budget spent measuring")
      ->capture_default_str();
  cmd->add_option("--option", f.strategy_options,
                  "strategy hyperparameter NAME=VALUE (repeatable; `kiln tune --list-options`)");
  cmd->add_option("--timeout", f.timeout, "seconds per candidate before it is killed")
      ->capture_default_str();
  cmd->add_flag("--no-isolate", f.no_isolate, "measure in this process (faster, not crash-safe)");
  cmd->add_option("--model", f.model_file, "a trained cost model (kiln train)");
  cmd->add_option("--save-model", f.save_model, "write the model trained during the run");
  cmd->add_option("--threads", f.threads, "threads for parallel loops (default: all cores)");
}

static std::optional<Error> finish_tune_flags(TuneFlags& f) {
  auto mode = search::parse_mode(f.mode);
  if (!mode)
    return Error("bad-option", fmt::format("unknown mode '{}'; the modes are online, offline, "
                                           "hybrid",
                                           f.mode));
  f.options.mode = *mode;
  for (const std::string& kv : f.strategy_options) {
    auto eq = kv.find('=');
    if (eq == std::string::npos)
      return Error("bad-option", fmt::format("--option {}: write NAME=VALUE", kv));
    if (auto err = search::set_strategy_option(f.options.strategy_options, kv.substr(0, eq),
                                               kv.substr(eq + 1)))
      return err;
  }
  kiln_rt_set_num_threads(f.threads);
  return std::nullopt;
}

static std::string op_command(const OpOptions& op) {
  std::string s = op.file;
  for (const std::string& kv : op.sets)
    s += " --set " + kv;
  return s;
}

static int tune_command(const OpOptions& op, TuneFlags& flags) {
  if (auto err = finish_tune_flags(flags))
    return fail(*err);
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  codegen::Target target = codegen::Target::host();
  measure::MeasureOptions mo;
  mo.isolate = !flags.no_isolate;
  mo.runner.timeout_seconds = flags.timeout;
  auto measurer = measure::ProgramMeasurer::create(*dag, target, mo);
  if (!measurer)
    return fail(measurer.error());

  std::unique_ptr<model::XGBoostModel> model;
  if (!flags.model_file.empty()) {
    auto loaded = model::XGBoostModel::load(flags.model_file);
    if (!loaded)
      return fail(loaded.error());
    model = std::make_unique<model::XGBoostModel>(std::move(*loaded));
  } else {
    model = std::make_unique<model::XGBoostModel>();
  }
  search::SketchSearchSpace sp(*dag, space_params(target));

  std::string log_path = flags.log.empty() ? dag->name() + ".jsonl" : flags.log;
  std::vector<measure::Record> history;
  if (flags.resume) {
    auto log = load_logs_verbose({log_path});
    if (!log)
      return fail(log.error());
    history = std::move(log->records);
  }
  auto writer = measure::LogWriter::open(log_path);
  if (!writer)
    return fail(writer.error());

  search::Tuner tuner({*dag, op.file, target, writer->get()}, sp, **measurer, *model,
                      flags.options);
  if (!history.empty())
    tuner.resume(history);
  fmt::print("tuning {} ({}) on {} {}: {} mode, {} strategy, {} trials, log {}\n", dag->name(),
             dag->workload_key(), target.cpu, target.triple, flags.mode, flags.options.strategy,
             flags.options.trials, log_path);
  bool tty = ::isatty(STDOUT_FILENO);
  std::int64_t errors = 0;
  auto result = tuner.run([&](const search::RoundStats& r) {
    errors += r.errors;
    fmt::print("{}", search::progress_line(r, flags.options.trials, errors, tty));
    std::fflush(stdout);
  });
  if (tty)
    fmt::print("\n");
  if (!result)
    return fail(result.error());
  std::string schedule_file;
  if (result->best) {
    schedule_file = log_path + ".best.json";
    std::ofstream out(schedule_file);
    out << schedule::schedule_file_text(dag->name(), result->best->config.steps);
  } else if (!result->records.empty() && flags.options.mode == search::Mode::Offline) {
    schedule_file = log_path + ".pick.json";
    std::ofstream out(schedule_file);
    out << schedule::schedule_file_text(dag->name(), result->records.front().config.steps);
    fmt::print("offline pick (predicted score {:.3f}) written to {}\n", result->predicted_score,
               schedule_file);
  }
  fmt::print("{}", search::summary(*result, op_command(op), schedule_file, log_path));
  if (!flags.save_model.empty())
    if (auto err = model->save(flags.save_model))
      return fail(*err);
  return result->best || flags.options.mode == search::Mode::Offline ? 0 : 1;
}

static int target_command(const std::string& triple, const std::string& cpu) {
  if (triple.empty() && cpu.empty()) {
    fmt::print("{}", codegen::Target::host().describe());
    return 0;
  }
  auto target = codegen::Target::named(triple.empty() ? codegen::Target::host().triple : triple,
                                       cpu.empty() ? "generic" : cpu);
  if (!target)
    return fail(target.error());
  fmt::print("{}", target->describe());
  return 0;
}

int main(int argc, char** argv) {
  CLI::App app{"kiln: a JIT code-generating autotuner for tensor operators"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  app.require_subcommand(1);

  OpOptions op;
  measure::RunOptions run_options;
  CLI::App* run = app.add_subcommand("run", "compile, check and time an operator's kernel");
  add_op_options(run, op);
  run->add_option("--seed", run_options.seed, "seed of the random inputs")->capture_default_str();
  run->add_option("--repeat", run_options.timing.repeat, "timed repeats")->capture_default_str();
  run->add_option("--min-repeat-ms", run_options.timing.min_repeat_ms,
                  "raise calls per repeat until a repeat lasts this long")
      ->capture_default_str();
  run->add_flag("--flush-cache", run_options.timing.flush_cache,
                "flush the caches before every repeat (one call per repeat)");
  int threads = 0;
  run->add_option("--threads", threads, "threads for parallel loops (default: all cores)");

  std::string stage = "loopnest", out;
  CLI::App* dump = app.add_subcommand("dump", "show the operator at one stage of compilation");
  add_op_options(dump, op);
  dump->add_option("--stage", stage, "what to show")
      ->check(CLI::IsMember({"dag", "loopnest", "llvm", "opt", "asm"}))
      ->capture_default_str();
  dump->add_option("-o,--output", out, "write to a file instead of standard output");

  std::string triple, cpu;
  CLI::App* target = app.add_subcommand("target", "show the machine kernels are compiled for");
  target->add_option("--target", triple, "an LLVM triple instead of the host's");
  target->add_option("--mcpu", cpu, "a CPU name instead of the host's");

  bool show_sketches = false;
  int samples = 0;
  std::uint64_t seed = 1;
  CLI::App* space_cmd = app.add_subcommand("space", "show an operator's search space");
  add_op_options(space_cmd, op);
  space_cmd->add_flag("--sketches", show_sketches, "print the sketches as loop nests");
  space_cmd->add_option("--sample", samples, "print N random configs (as steps)");
  space_cmd->add_option("--seed", seed, "random seed")->capture_default_str();

  TuneFlags tune_flags;
  CLI::App* tune = app.add_subcommand("tune", "find the fastest correct kernel for an operator");
  add_op_options(tune, op);
  add_tune_flags(tune, tune_flags);
  tune->add_option("--log", tune_flags.log, "tuning log (default: OPNAME.jsonl)");
  tune->add_flag("--resume", tune_flags.resume, "continue from the log's records of this task");

  std::vector<std::string> logs;
  CLI::App* best = app.add_subcommand("best", "list the best config of every task in logs");
  best->add_option("logs", logs, "tuning logs (JSON lines)")->required();

  std::string task_key;
  measure::MeasureOptions replay_options;
  CLI::App* replay = app.add_subcommand("replay", "rebuild, check and re-time the best configs");
  replay->add_option("logs", logs, "tuning logs (JSON lines)")->required();
  replay->add_option("--task", task_key, "only this workload key");
  replay->add_option("--timeout", replay_options.runner.timeout_seconds, "seconds per candidate")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  if (tune->parsed())
    return tune_command(op, tune_flags);
  if (space_cmd->parsed())
    return space_command(op, show_sketches, samples, seed);
  if (best->parsed())
    return best_command(logs);
  if (replay->parsed())
    return replay_command(logs, task_key, replay_options);
  if (run->parsed()) {
    kiln_rt_set_num_threads(threads);
    return run_command(op, run_options);
  }
  if (dump->parsed())
    return dump_command(op, stage, out);
  return target_command(triple, cpu);
}
