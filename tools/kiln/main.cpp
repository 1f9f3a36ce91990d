// kiln: the command-line tool. Thin by design: it parses options and calls
// the library; everything it does is available to a program linking libkiln.
#include "kiln/codegen/compiler.h"
#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/replay.h"
#include "kiln/measure/run.h"
#include "kiln/measure/tuning_curve.h"
#include "kiln/measure/tuning_log.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/report/report.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/search/dataset.h"
#include "kiln/search/progress.h"
#include "kiln/search/tuner.h"
#include "kiln/space/sketch.h"
#include "kiln/space/templates.h"
#include "kiln/support/error.h"
#include "kiln/support/stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
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

/// `schedule_help`: what --schedule means to the command; empty: the
/// command takes no schedule.
void add_op_options(CLI::App* cmd, OpOptions& op,
                    const std::string& schedule_help =
                        "schedule file (JSON steps, docs/schedule-format.md); default: naive") {
  cmd->add_option("opfile", op.file, "operator file (.kop)")->required();
  cmd->add_option("--set", op.sets, "override a parameter, NAME=VALUE (repeatable)");
  if (!schedule_help.empty())
    cmd->add_option("--schedule", op.schedule, schedule_help);
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
  auto state = schedule::State::load(dag, op.schedule);
  if (!state)
    return state.error();
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
  Target target = codegen::host_target();
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
      auto compiler = codegen::Compiler::create(codegen::host_target());
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

static int best_command(const std::vector<std::string>& logs,
                        const std::vector<std::int64_t>& curve) {
  auto log = load_logs_verbose(logs);
  if (!log)
    return fail(log.error());
  if (!curve.empty()) {
    fmt::print("{}", measure::curve_table(measure::tuning_curves(*log, curve)));
    return 0;
  }
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
  Target target = codegen::host_target();
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

/// `kiln space --template NAME`: the template's knobs, its size, or sampled
/// configs.
static int template_space_command(const ir::ComputeDAG& dag, const std::string& name, bool size,
                                  int samples, std::uint64_t seed) {
  auto t = space::make_template(name, dag, search::space_params(codegen::host_target()));
  if (!t)
    return fail(t.error());
  const space::ConfigSpace& sp = (*t)->space();
  auto n = sp.size();
  std::string count = n ? std::to_string(*n) : std::string("more than 2^64");
  if (size) {
    fmt::print("{}\n", count);
    return 0;
  }
  if (samples <= 0) {
    fmt::print("template {} for {}: {} configs, {} knobs\n{}", name, dag.name(), count,
               sp.knobs().size(), sp.describe());
    return 0;
  }
  std::mt19937_64 rng(seed);
  for (int i = 0; i < samples; ++i) {
    space::KnobConfig c = sp.sample(rng);
    fmt::print("config {} (index {}): {}\n  {}\n", i, sp.index_of(c), sp.describe(c),
               schedule::steps_to_json((*t)->steps(c)));
  }
  return 0;
}

static int space_command(const OpOptions& op, bool sketches, int samples, std::uint64_t seed,
                         const std::string& template_name, bool size) {
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  if (!template_name.empty())
    return template_space_command(*dag, template_name, size, samples, seed);
  if (size)
    return fail(Error("bad-option", "--size counts a template's space: add --template NAME "
                                    "(the sketch space is sampled, not enumerated)"));
  space::SketchSpace sp(*dag, search::space_params(codegen::host_target()));
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
  std::string report;
  std::vector<std::string> strategy_options;
  double timeout = 10;
  bool no_isolate = false;
  int threads = 0;
  std::string space;         ///< "sketch" or "template"; empty: sketch unless --template
  std::string template_name; ///< empty: the template that fits the op
  std::string config;        ///< TOML file of options
};

/// --repeat and --min-repeat-ms, for the commands that time kernels.
static void add_timing_options(CLI::App* cmd, measure::TimingOptions& timing,
                               const std::string& repeat_help) {
  cmd->add_option("--repeat", timing.repeat, repeat_help)->capture_default_str();
  cmd->add_option("--min-repeat-ms", timing.min_repeat_ms,
                  "raise calls per repeat until a repeat lasts this long")
      ->capture_default_str();
}

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
  cmd->add_option("--confirm-top", o.confirm_top,
                  "online, hybrid: time the K best configs again at the end and judge each by "
                  "the median of its timings (0: off)")
      ->capture_default_str();
  cmd->add_option("--confirm-timings", o.confirm_timings,
                  "how many more times each of those is timed")
      ->capture_default_str();
  cmd->add_option("--measure-fraction", o.measure_fraction,
                  "hybrid: share of --time-budget spent measuring")
      ->capture_default_str();
  cmd->add_option("--option", f.strategy_options,
                  "strategy hyperparameter NAME=VALUE (repeatable; `kiln tune --list-options`)");
  cmd->add_option("--timeout", f.timeout, "seconds per candidate before it is killed")
      ->capture_default_str();
  cmd->add_flag("--no-isolate", f.no_isolate, "measure in this process (faster, not crash-safe)");
  cmd->add_option("--model", f.model_file,
                  "a trained cost model (kiln train); offline and hybrid runs default to the "
                  "shipped data/kiln-default.model");
  cmd->add_option("--save-model", f.save_model, "write the model trained during the run");
  cmd->add_option("--threads", f.threads, "threads for parallel loops (default: all cores)");
  cmd->add_option("--report", f.report, "write an HTML report of the run's log to this file");
  cmd->add_option("--space", f.space,
                  "sketch (Ansor, the default) | template (AutoTVM knobs; docs/templates.md)")
      ->check(CLI::IsMember({"sketch", "template"}));
  cmd->add_option("--template", f.template_name,
                  "with --space template: the template (default: the one that fits the op)");
  // A callback, so that it works without an op file: callbacks run before
  // CLI11 checks required arguments.
  cmd->add_flag_callback(
      "--list-options",
      [] {
        fmt::print("strategy hyperparameters (--option NAME=VALUE), with their defaults:\n{}",
                   search::describe_strategy_options(search::StrategyOptions{}));
        std::exit(0);
      },
      "print every strategy hyperparameter with its default, and exit");
  cmd->add_option("--config", f.config,
                  "read options from a TOML file, e.g. `trials = 1000` and `option = "
                  "[\"population=1024\"]` (command-line flags win; docs/tuning.md)");
}

/// Applies a TOML file's `name = value` lines to the options of `cmd` not
/// given on the command line. (CLI11 reads config files for the main app
/// only, and `kiln tune --config FILE` is where users look for it.)
static std::optional<Error> apply_config_file(CLI::App* cmd, const std::string& path) {
  if (path.empty())
    return std::nullopt;
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(path);
  } catch (const CLI::Error& e) {
    return Error("bad-config", fmt::format("{}: cannot read it as TOML: {}", path, e.what()));
  }
  for (const CLI::ConfigItem& item : items) {
    if (item.name == "++" || item.name == "--")
      continue; // section markers
    std::string name = item.fullname();
    CLI::Option* opt = cmd->get_option_no_throw("--" + name);
    if (!opt || name == "config")
      return Error("bad-config",
                   fmt::format("{}: '{}' is not an option of `kiln {}`; the names are the long "
                               "options without the dashes (`kiln {} --help`)",
                               path, name, cmd->get_name(), cmd->get_name()));
    if (opt->count() > 0)
      continue; // given on the command line
    try {
      opt->add_result(item.inputs);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      return Error("bad-config", fmt::format("{}: {}: {}", path, name, e.what()));
    }
  }
  return std::nullopt;
}

/// The command line as typed, for reports.
static std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i)
    s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

static std::string g_command; ///< set once in main

static std::optional<Error> write_run_report(const std::string& log, const std::string& out) {
  if (out.empty())
    return std::nullopt;
  report::ReportOptions options;
  options.command = g_command;
  if (auto err = report::write_report(std::vector<std::string>{log}, out, options))
    return err;
  fmt::print("report written to {}\n", out);
  return std::nullopt;
}

static std::optional<Error> finish_tune_flags(CLI::App* cmd, TuneFlags& f) {
  if (auto err = apply_config_file(cmd, f.config))
    return err;
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

/// The space `--space` and `--template` ask for.

static std::string space_text(const search::SearchSpace& sp) {
  if (const auto* t = dynamic_cast<const search::TemplateSearchSpace*>(&sp))
    return fmt::format("template {} ({} configs)", t->templ().name(),
                       sp.size() ? std::to_string(*sp.size()) : std::string("> 2^64"));
  return sp.name();
}

static std::string op_command(const OpOptions& op) {
  std::string s = op.file;
  for (const std::string& kv : op.sets)
    s += " --set " + kv;
  return s;
}

/// The model for offline and hybrid runs: --model, else the default model
/// shipped in data/ (trained on this machine type by scripts/train-default-model).
static Expected<model::XGBoostModel> pretrained_model(const std::string& file) {
  std::string path = file.empty() ? std::string(KILN_DATA_DIR) + "/kiln-default.model" : file;
  auto m = model::XGBoostModel::load(path);
  if (!m && file.empty())
    return Error(m.error().id(),
                 fmt::format("{}; pass --model FILE (kiln train writes one)", m.error().message()));
  return m;
}

static int tune_command(CLI::App* cmd, const OpOptions& op, TuneFlags& flags) {
  if (auto err = finish_tune_flags(cmd, flags))
    return fail(*err);
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  Target target = codegen::host_target();
  measure::MeasureOptions mo;
  mo.isolate = !flags.no_isolate;
  mo.runner.timeout_seconds = flags.timeout;
  auto measurer = measure::ProgramMeasurer::create(*dag, target, mo);
  if (!measurer)
    return fail(measurer.error());

  std::unique_ptr<model::XGBoostModel> model;
  if (!flags.model_file.empty() || flags.options.mode != search::Mode::Online) {
    auto loaded = pretrained_model(flags.model_file);
    if (!loaded)
      return fail(loaded.error());
    model = std::make_unique<model::XGBoostModel>(std::move(*loaded));
  } else {
    model = std::make_unique<model::XGBoostModel>(model::online_training_params());
  }
  auto sp = search::make_search_space(*dag, target, flags.space, flags.template_name);
  if (!sp)
    return fail(sp.error());

  if (!op.schedule.empty()) {
    auto state = schedule::State::load(*dag, op.schedule);
    if (!state)
      return fail(state.error());
    measure::Config start;
    start.steps = state->steps();
    flags.options.start_configs.push_back(std::move(start));
  }
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

  search::Tuner tuner({*dag, op.file, target, writer->get()}, **sp, **measurer, *model,
                      flags.options);
  if (!history.empty())
    tuner.resume(history);
  fmt::print("tuning {} ({}) on {} {}: {} space, {} mode, {} strategy, {} trials, log {}\n",
             dag->name(), dag->workload_key(), target.cpu, target.triple, space_text(**sp),
             flags.mode, flags.options.strategy, flags.options.trials, log_path);
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
  writer->reset(); // flushed and closed before the report reads it
  if (auto err = write_run_report(log_path, flags.report))
    return fail(*err);
  return result->best || flags.options.mode == search::Mode::Offline ? 0 : 1;
}

static int dataset_command(const std::string& dir, const search::DatasetOptions& options,
                           const std::string& out) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".kop")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty())
    return fail(Error("no-ops", fmt::format("no .kop files in '{}'", dir)));
  std::vector<measure::Record> existing;
  if (std::filesystem::exists(out)) {
    auto log = load_logs_verbose({out});
    if (!log)
      return fail(log.error());
    existing = std::move(log->records);
    fmt::print("resuming: {} records already in {}\n", existing.size(), out);
  }
  auto writer = measure::LogWriter::open(out);
  if (!writer)
    return fail(writer.error());
  auto err =
      search::collect_dataset(files, codegen::host_target(), options, existing, **writer,
                              [](const search::DatasetProgress& p) {
                                fmt::print("task {}/{} {}: {} measured, {} already in the "
                                           "log\n",
                                           p.task_index, p.tasks, p.task, p.measured, p.skipped);
                                std::fflush(stdout);
                              });
  if (err)
    return fail(*err);
  fmt::print("dataset written to {}\n", out);
  return 0;
}

static Expected<std::vector<model::Sample>>
samples_of(const std::vector<measure::Record>& records) {
  std::vector<std::string> warnings;
  std::vector<model::Sample> samples = search::samples_from_records(records, &warnings);
  for (const std::string& w : warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (samples.empty())
    return Error("no-samples", "the records give no training sample; measure some first "
                               "(kiln dataset, kiln tune)");
  return samples;
}

static int train_command(const std::vector<std::string>& data, const std::string& out,
                         const std::string& holdout, const std::vector<std::string>& holdout_ops,
                         const model::XGBoostParams& params) {
  auto log = load_logs_verbose(data);
  if (!log)
    return fail(log.error());
  search::Split split{log->records, {}};
  if (holdout == "shapes")
    split = search::split_unseen_shapes(log->records);
  else if (holdout == "ops")
    split = search::split_unseen_ops(log->records, holdout_ops);
  else if (holdout != "none")
    return fail(Error("bad-option", fmt::format("--holdout {}: use none, shapes or ops", holdout)));
  auto train = samples_of(split.train);
  if (!train)
    return fail(train.error());
  model::XGBoostModel m(params);
  m.set_target(codegen::host_target().cpu);
  Stopwatch clock;
  m.train(*train);
  fmt::print("trained on {} programs ({} rows, {} trees) in {:.1f} s\n", m.last_training().programs,
             m.last_training().rows, m.rounds(), clock.elapsed_ms() / 1e3);
  if (auto err = m.save(out))
    return fail(*err);
  fmt::print("model written to {}\n", out);
  if (!split.test.empty()) {
    std::string held = out + ".holdout.jsonl";
    auto writer = measure::LogWriter::open(held);
    if (!writer)
      return fail(writer.error());
    (void)(*writer)->append(split.test);
    auto test = samples_of(split.test);
    if (!test)
      return fail(test.error());
    fmt::print("held out ({}; written to {}):\n{}", holdout, held,
               search::evaluate(m, *test).describe());
  }
  return 0;
}

static int evaluate_command(const std::string& model_file, const std::vector<std::string>& data) {
  auto m = model::XGBoostModel::load(model_file);
  if (!m)
    return fail(m.error());
  auto log = load_logs_verbose(data);
  if (!log)
    return fail(log.error());
  auto samples = samples_of(log->records);
  if (!samples)
    return fail(samples.error());
  fmt::print("{}", search::evaluate(*m, *samples).describe());
  return 0;
}

static double mean_accuracy(const search::TuneResult& r) {
  double sum = 0;
  int n = 0;
  for (const search::RoundStats& s : r.rounds)
    if (s.model_accuracy >= 0) {
      sum += s.model_accuracy;
      ++n;
    }
  return n ? sum / n : -1;
}

static int compare_command(CLI::App* cmd, const OpOptions& op, TuneFlags& flags) {
  if (auto err = finish_tune_flags(cmd, flags))
    return fail(*err);
  auto dag = load_op(op);
  if (!dag)
    return fail(dag.error());
  auto pretrained = pretrained_model(flags.model_file);
  if (!pretrained)
    return fail(pretrained.error());
  Target target = codegen::host_target();
  measure::MeasureOptions mo;
  mo.isolate = !flags.no_isolate;
  mo.runner.timeout_seconds = flags.timeout;
  auto measurer = measure::ProgramMeasurer::create(*dag, target, mo);
  if (!measurer)
    return fail(measurer.error());
  auto sp = search::make_search_space(*dag, target, flags.space, flags.template_name);
  if (!sp)
    return fail(sp.error());
  std::string log_path = flags.log.empty() ? dag->name() + ".compare.jsonl" : flags.log;
  auto writer = measure::LogWriter::open(log_path);
  if (!writer)
    return fail(writer.error());

  struct Row {
    std::string mode;
    search::TuneResult result;
    double accuracy;
  };
  std::vector<Row> rows;
  for (search::Mode mode : {search::Mode::Online, search::Mode::Offline, search::Mode::Hybrid}) {
    search::TuneOptions o = flags.options;
    o.mode = mode;
    o.run = "";
    model::XGBoostModel fresh(model::online_training_params());
    model::CostModel& m =
        mode == search::Mode::Online ? static_cast<model::CostModel&>(fresh) : *pretrained;
    search::Tuner tuner({*dag, op.file, target, writer->get()}, **sp, **measurer, m, o);
    fmt::print("{} ...\n", search::mode_name(mode));
    std::fflush(stdout);
    auto result = tuner.run();
    if (!result)
      return fail(result.error());
    rows.push_back({std::string(search::mode_name(mode)), std::move(*result), 0});
    rows.back().accuracy = mean_accuracy(rows.back().result);
  }
  // The pretrained model judged on what the online run measured: an honest
  // accuracy for offline, which measured almost nothing itself.
  if (auto online_samples = search::samples_from_records(rows[0].result.records);
      !online_samples.empty())
    rows[1].accuracy = search::evaluate(*pretrained, online_samples).pairwise;
  double best = 0;
  for (const Row& r : rows)
    best = std::max(best, r.result.best ? r.result.best->gflops() : 0.0);
  fmt::print("\n{} ({}), {} trials each, log {}\n", dag->name(), params_text(*dag),
             flags.options.trials, log_path);
  fmt::print("{:<8} {:>9} {:>9} {:>10} {:>13} {:>10}\n", "mode", "GFLOPS", "vs best", "time (s)",
             "measurements", "model acc");
  for (const Row& r : rows) {
    double g = r.result.best ? r.result.best->gflops() : 0;
    fmt::print("{:<8} {:>9.2f} {:>9.2f} {:>10.1f} {:>13} {:>10}\n", r.mode, g,
               best > 0 ? g / best : 0, r.result.seconds, r.result.trials + r.result.confirmations,
               r.accuracy >= 0 ? fmt::format("{:.2f}", r.accuracy) : std::string("-"));
  }
  writer->reset();
  if (auto err = write_run_report(log_path, flags.report))
    return fail(*err);
  fmt::print("model acc: pairwise ranking accuracy on measured configs (online: per round, before "
             "each update; offline: the pretrained model on the online run's measurements; "
             "hybrid: on its short list)\n");
  return 0;
}

static std::string format_bytes(std::int64_t b) {
  if (b <= 0)
    return "unknown";
  if (b % (1 << 20) == 0)
    return fmt::format("{} MiB", b >> 20);
  return fmt::format("{} KiB", b >> 10);
}

static std::string describe_target(const Target& t) {
  return fmt::format("triple:   {}\n"
                     "cpu:      {}\n"
                     "vector:   {} bits ({} x f32)\n"
                     "cores:    {}\n"
                     "caches:   L1d {}, L2 {}, L3 {}\n"
                     "features: {}\n",
                     t.triple, t.cpu, t.vector_bits, t.vector_lanes(32), t.cores,
                     format_bytes(t.l1d_bytes), format_bytes(t.l2_bytes), format_bytes(t.l3_bytes),
                     t.enabled_features());
}

static int target_command(const std::string& triple, const std::string& cpu) {
  if (triple.empty() && cpu.empty()) {
    fmt::print("{}", describe_target(codegen::host_target()));
    return 0;
  }
  auto target = codegen::named_target(triple.empty() ? codegen::host_target().triple : triple,
                                       cpu.empty() ? "generic" : cpu);
  if (!target)
    return fail(target.error());
  fmt::print("{}", describe_target(*target));
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
  add_timing_options(run, run_options.timing, "timed repeats");
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
  add_op_options(space_cmd, op, "");
  space_cmd->add_flag("--sketches", show_sketches, "print the sketches as loop nests");
  space_cmd->add_option("--sample", samples, "print N random configs (as steps)");
  space_cmd->add_option("--seed", seed, "random seed")->capture_default_str();
  std::string space_template;
  bool space_size = false;
  space_cmd->add_option("--template", space_template,
                        "a template's space instead (matmul, dense, conv2d_nchw): its knobs, or "
                        "with --sample N configs");
  space_cmd->add_flag("--size", space_size, "with --template: print the number of configs");

  TuneFlags tune_flags;
  CLI::App* tune = app.add_subcommand("tune", "find the fastest correct kernel for an operator");
  add_op_options(tune, op,
                 "a schedule file to start from (a backend's own, a hand-written one): measured "
                 "first, in the race for the best (docs/tuning.md)");
  add_tune_flags(tune, tune_flags);
  tune->add_option("--log", tune_flags.log, "tuning log (default: OPNAME.jsonl)");
  tune->add_flag("--resume", tune_flags.resume, "continue from the log's records of this task");

  TuneFlags compare_flags;
  compare_flags.options.trials = 64;
  CLI::App* compare = app.add_subcommand("compare", "online vs offline vs hybrid on one budget");
  add_op_options(compare, op, "");
  add_tune_flags(compare, compare_flags);
  compare->add_option("--log", compare_flags.log,
                      "log of the three runs (default: OPNAME.compare.jsonl)");

  std::string data_dir, data_out = "dataset.jsonl";
  search::DatasetOptions data_options;
  measure::RunnerOptions& data_runner = data_options.measure.runner;
  CLI::App* dataset =
      app.add_subcommand("dataset", "measure random configs of every op in a folder");
  dataset->add_option("opdir", data_dir, "folder of .kop files")->required();
  dataset->add_option("--samples", data_options.samples, "random configs per task")
      ->capture_default_str();
  dataset->add_option("--seed", data_options.seed, "random seed")->capture_default_str();
  dataset->add_option("-o,--output", data_out, "the log to write (resumed if it exists)")
      ->capture_default_str();
  dataset->add_option("--timeout", data_runner.timeout_seconds, "seconds per candidate")
      ->capture_default_str();
  add_timing_options(dataset, data_runner.timing, "timed repeats; the label is their median");

  std::vector<std::string> data_files, holdout_ops;
  std::string model_out = "kiln.model", holdout = "none";
  CLI::App* train = app.add_subcommand("train", "train a cost model on logs");
  train->add_option("data", data_files, "logs (JSON lines)")->required();
  train->add_option("-o,--output", model_out, "the model file")->capture_default_str();
  train->add_option("--holdout", holdout, "none | shapes | ops: hold tasks out to evaluate on")
      ->capture_default_str();
  train->add_option("--holdout-op", holdout_ops, "with --holdout ops: an op to hold out");
  // Offline training defaults: the best held-out ranking on
  // data/dataset-rocketlake.jsonl (docs/features.md, "Training"); the
  // online tuner keeps the library's.
  model::XGBoostParams xgb = model::offline_training_params();
  train->add_option("--max-depth", xgb.max_depth, "XGBoost tree depth")->capture_default_str();
  train->add_option("--eta", xgb.eta, "XGBoost learning rate")->capture_default_str();
  train->add_option("--min-child-weight", xgb.min_child_weight, "XGBoost min_child_weight")
      ->capture_default_str();
  train
      ->add_option("--min-weight", xgb.min_weight,
                   "least sample weight (weights are labels; above 0 slow configs count too)")
      ->capture_default_str();
  std::string objective = model::to_string(xgb.objective);
  train
      ->add_option("--objective", objective,
                   "rank (pairs within a task) | pack-sum (Ansor's regression); docs/features.md")
      ->check(CLI::IsMember({"rank", "pack-sum"}))
      ->capture_default_str();
  train->add_option("--max-rounds", xgb.max_rounds, "most boosting rounds")->capture_default_str();
  train->add_option("--subsample", xgb.subsample, "XGBoost subsample")->capture_default_str();
  train->add_option("--colsample", xgb.colsample, "XGBoost colsample_bytree")
      ->capture_default_str();
  train->add_option("--max-bin", xgb.max_bin, "XGBoost histogram bins per column")
      ->check(CLI::Range(2, 65536))
      ->capture_default_str();
  train
      ->add_option("--pair-gap", xgb.pair_gap,
                   "rank: skip pairs whose labels differ by less than this fraction")
      ->capture_default_str();
  train->callback([&] { xgb.objective = *model::objective_from_string(objective); });

  std::string model_in;
  CLI::App* evaluate = app.add_subcommand("evaluate", "how well a model ranks logged configs");
  evaluate->add_option("model", model_in, "model file")->required();
  evaluate->add_option("data", data_files, "logs (JSON lines)")->required();

  std::vector<std::string> report_logs, baselines;
  std::string report_out = "report.html";
  CLI::App* report_cmd = app.add_subcommand("report", "draw an HTML report of tuning logs");
  report_cmd->add_option("logs", report_logs, "tuning logs (JSON lines)")->required();
  report_cmd->add_option("-o,--output", report_out, "the HTML file")->capture_default_str();
  report_cmd->add_option("--baseline", baselines, "a library baseline LABEL=GFLOPS (repeatable)");

  std::vector<std::string> logs;
  CLI::App* best = app.add_subcommand("best", "list the best config of every task in logs");
  best->add_option("logs", logs, "tuning logs (JSON lines)")->required();
  std::vector<std::int64_t> curve;
  best->add_option("--curve", curve,
                   "instead: the best GFLOPS and seconds of every run after these numbers of "
                   "trials, e.g. --curve 50,100,200")
      ->delimiter(',');

  std::string task_key;
  measure::MeasureOptions replay_options;
  CLI::App* replay = app.add_subcommand("replay", "rebuild, check and re-time the best configs");
  replay->add_option("logs", logs, "tuning logs (JSON lines)")->required();
  replay->add_option("--task", task_key, "only this workload key");
  replay->add_option("--timeout", replay_options.runner.timeout_seconds, "seconds per candidate")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  g_command = command_line(argc, argv);
  if (report_cmd->parsed()) {
    report::ReportOptions options;
    options.command = g_command;
    for (const std::string& b : baselines) {
      auto eq = b.find('=');
      char* end = nullptr;
      double g = eq == std::string::npos ? 0 : std::strtod(b.c_str() + eq + 1, &end);
      if (eq == std::string::npos || !end || *end != '\0')
        return fail(Error("bad-option", fmt::format("--baseline {}: write LABEL=GFLOPS", b)));
      options.baselines.push_back({b.substr(0, eq), g, ""});
    }
    if (auto err = report::write_report(report_logs, report_out, options))
      return fail(*err);
    fmt::print("report written to {}\n", report_out);
    return 0;
  }
  if (compare->parsed())
    return compare_command(compare, op, compare_flags);
  if (dataset->parsed())
    return dataset_command(data_dir, data_options, data_out);
  if (train->parsed())
    return train_command(data_files, model_out, holdout, holdout_ops, xgb);
  if (evaluate->parsed())
    return evaluate_command(model_in, data_files);
  if (tune->parsed())
    return tune_command(tune, op, tune_flags);
  if (space_cmd->parsed())
    return space_command(op, show_sketches, samples, seed, space_template, space_size);
  if (best->parsed())
    return best_command(logs, curve);
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
