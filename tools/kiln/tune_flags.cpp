#include "tune_flags.h"

#include "kiln/codegen/runtime.h"
#include "kiln/measure/simulated_measurer.h"
#include "kiln/report/report.h"

#include <fmt/format.h>

namespace kiln::tool {

void add_tune_flags(CLI::App* cmd, TuneFlags& f) {
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
  cmd->add_option("--retrain-growth", o.retrain_growth,
                  "online: retrain the cost model once its training set has grown by this "
                  "fraction (0: every round); faster rounds, a staler model")
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
  cmd->add_option("--reference-timeout", f.reference_timeout,
                  "seconds the reference computation (naive kernel and interpreter) may take")
      ->capture_default_str();
  cmd->add_flag("--no-isolate", f.no_isolate, "measure in this process (faster, not crash-safe)");
  cmd->add_option("--model", f.model_file,
                  "a trained cost model (kiln train); offline and hybrid runs default to the "
                  "shipped data/kiln-default.model");
  cmd->add_option("--transfer", f.transfer_logs,
                  "logs of other shapes of the op: when this shape has no record, the best "
                  "configs of the nearest tuned one, tile sizes refitted, are measured first "
                  "(repeatable)");
  cmd->add_flag(
      "--pipeline", [&f](std::int64_t) { f.pipeline = true; },
      "propose and retrain while the previous batch is measured (default in a cluster job)");
  cmd->add_flag(
      "--no-pipeline", [&f](std::int64_t) { f.pipeline = false; },
      "measure each batch before proposing the next, also in a cluster job");
  cmd->add_option("--simulate", f.simulate,
                  "measure nothing: each trial takes SECONDS and gets a made-up time from its "
                  "program (for timing kiln's own overhead, e.g. on a cluster)")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--save-model", f.save_model, "write the model trained during the run");
  cmd->add_option("--threads", f.threads, "threads for parallel loops (default: all cores)")
      ->check(CLI::Range(0, KILN_RT_MAX_THREADS));
  cmd->add_option("--report", f.report, "write an HTML report of the run's log to this file");
  cmd->add_option("--space", f.space,
                  "sketch (Ansor, the default) | template (AutoTVM knobs; docs/templates.md)")
      ->check(CLI::IsMember({"sketch", "template"}));
  cmd->add_option("--template", f.template_name,
                  "with --space template: the template (default: the one that fits the op)");
  // A callback, so that it works without an op file: callbacks run before
  // CLI11 checks required arguments. CLI::Success ends the parse with
  // status 0, as --help does.
  cmd->add_flag_callback(
      "--list-options",
      [] {
        fmt::print("strategy hyperparameters (--option NAME=VALUE), with their defaults:\n");
        for (const auto& o : search::strategy_option_list(search::StrategyOptions{}))
          fmt::print("{:<20} = {:<6}  {}\n", o.name, o.value, o.help);
        throw CLI::Success();
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

Expected<search::SessionOptions> session_options(CLI::App* cmd, TuneFlags& f,
                                                 const ToolContext& ctx) {
  if (auto err = apply_config_file(cmd, f.config))
    return *err;
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
      return *err;
  }
  kiln_rt_set_num_threads(f.threads);
  search::SessionOptions s;
  s.tune = f.options;
  s.source = f.op.file;
  s.space = f.space;
  s.template_name = f.template_name;
  s.measure.isolate = !f.no_isolate;
  s.measure.runner.timeout_seconds = f.timeout;
  s.measure.reference_timeout_seconds = f.reference_timeout;
  s.model_file = f.model_file;
  s.default_model = ctx.data_dir + "/kiln-default.model";
  s.log = f.log;
  s.resume = f.resume;
  s.transfer_logs = f.transfer_logs;
  s.tune.pipeline = f.pipeline.value_or(false);
  if (f.make_measurer) {
    s.make_measurer = f.make_measurer;
  } else if (f.simulate >= 0) {
    s.make_measurer = measure::simulated_measurers(f.simulate);
  }
  if (!f.op.schedule.empty())
    s.start_schedules.push_back(f.op.schedule);
  s.save_model = f.save_model;
  return s;
}

std::optional<Error> write_run_report(const std::string& log, const std::string& out,
                                      const ToolContext& ctx) {
  if (out.empty())
    return std::nullopt;
  report::ReportOptions options;
  options.command = ctx.command_line;
  if (auto err = report::write_report(std::vector<std::string>{log}, out, options))
    return err;
  fmt::print("report written to {}\n", out);
  return std::nullopt;
}

std::string space_text(const search::SearchSpace& sp) {
  if (const auto* t = dynamic_cast<const search::TemplateSearchSpace*>(&sp))
    return fmt::format("template {} ({} configs)", t->templ().name(),
                       sp.size() ? std::to_string(*sp.size()) : std::string("> 2^64"));
  return sp.name();
}

} // namespace kiln::tool
