// kiln run: compile, check and time an operator's kernel.
#include "command.h"
#include "common.h"
#include "output.h"
#include "run_model.h"

#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/measure/run.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <memory>

namespace kiln::tool {

namespace {
struct RunFlags {
  OpOptions op;
  measure::RunOptions options;
  int threads = 0;
  std::vector<std::string> logs; ///< for a model
  bool no_check = false;
  bool no_nearest_shape = false;
  std::string write_io;
  int profile = 0;
};
} // namespace

static bool is_model(const std::string& path) {
  return path.size() > 5 && path.compare(path.size() - 5, 5, ".onnx") == 0;
}

static int run_network(const RunFlags& f) {
  if (!f.op.sets.empty() || !f.op.schedule.empty())
    return fail(Error("bad-option", "--set and --schedule apply to op files; a model's tasks "
                                    "take their schedules from --log"));
  RunModelFlags m;
  m.model = f.op.file;
  m.logs = f.logs;
  m.threads = f.threads;
  m.options.seed = f.options.seed;
  m.options.repeat = f.options.timing.repeat;
  m.options.check = !f.no_check;
  m.nearest_shape = !f.no_nearest_shape;
  m.options.write_io = f.write_io;
  m.options.profile_repeats = f.profile;
  return run_model(m);
}

static int run(const RunFlags& f) {
  if (is_model(f.op.file))
    return run_network(f);
  if (!f.logs.empty() || !f.write_io.empty() || f.profile > 0)
    return fail(Error("bad-option", "--log, --write-io and --profile apply to a model (.onnx); "
                                    "an op file takes its schedule from --schedule"));
  kiln_rt_set_num_threads(f.threads);
  auto dag = load_op(f.op);
  if (!dag)
    return fail(dag.error());
  Stopwatch clock;
  auto func = lower_op(*dag, f.op);
  if (!func)
    return fail(func.error());
  double lower_ms = clock.elapsed_ms();
  Target target = codegen::host_target();
  fmt::print("op:       {} ({})\nkey:      {}\ntarget:   {} {}, {} bits\nschedule: {}\n",
             dag->name(), params_text(*dag), dag->workload_key(), target.triple, target.cpu,
             target.vector_bits, f.op.schedule.empty() ? "naive" : f.op.schedule);
  auto report = measure::compile_and_run(*dag, *func, target, f.options);
  if (!report)
    return fail(report.error());
  fmt::print("{}lower:    {:.2f} ms\n", describe_run(*report), lower_ms);
  return report->check.passed ? 0 : 1;
}

Command add_run_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand(
      "run", "compile, check and time an operator's kernel, or a whole model (.onnx)");
  add_op_options(cmd, f->op);
  cmd->add_option("--log", f->logs,
                  "a model's tuning log(s): each task runs its best record (repeatable)");
  cmd->add_flag("--no-nearest-shape", f->no_nearest_shape,
                "a model: a task with no record runs naive, not the refitted best of the "
                "nearest tuned shape of its op (checked and timed first)");
  cmd->add_flag("--no-check", f->no_check,
                "a model: do not compare the outputs with the naive kernels'");
  cmd->add_option("--write-io", f->write_io,
                  "a model: write the inputs and outputs as PREFIX.in<i>.f32, PREFIX.out<i>.f32");
  cmd->add_option("--profile", f->profile,
                  "a model: after the timed runs, N more that time each group where it runs, "
                  "printed by task next to its record's time")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", f->options.seed, "seed of the random inputs")->capture_default_str();
  add_timing_options(cmd, f->options.timing, "timed repeats");
  cmd->add_flag("--flush-cache", f->options.timing.flush_cache,
                "flush the caches before every repeat (one call per repeat)");
  cmd->add_option("--threads", f->threads, "threads for parallel loops (default: all cores)")
      ->check(CLI::Range(0, KILN_RT_MAX_THREADS));
  f->options.isolation.enabled = true;
  cmd->add_option("--timeout", f->options.isolation.timeout_seconds,
                  "seconds the kernel may take to run, be checked and be timed")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 86400.0));
  cmd->add_flag(
      "--no-isolate", [f](std::int64_t) { f->options.isolation.enabled = false; },
      "run the kernel in this process (not crash-safe)");
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
