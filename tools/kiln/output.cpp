#include "output.h"

#include "common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace kiln::tool {

std::string describe_run(const measure::RunReport& r) {
  std::string prepack =
      r.prepack_ms >= 0
          ? fmt::format("prepack:  {:.4f} ms, once (constant inputs packed ahead, not timed)\n",
                        r.prepack_ms)
          : "";
  return fmt::format("check:    {}\n"
                     "time:     {:.4f} ms median, {:.4f} ms min ({} repeats of {} calls, {} "
                     "thread{})\n"
                     "speed:    {:.2f} GFLOPS ({:.4g} flops a call)\n"
                     "compile:  {:.1f} ms (LLVM IR {:.1f}, optimise {:.1f}, machine code {:.1f}, "
                     "link {:.1f})\n{}",
                     r.check.describe(), r.timing.median() * 1e3, r.timing.min() * 1e3,
                     r.timing.seconds.size(), r.timing.number, r.threads, r.threads == 1 ? "" : "s",
                     r.gflops(), r.flops, r.compile.total_ms() + r.link_ms, r.compile.ir_ms,
                     r.compile.opt_ms, r.compile.codegen_ms, r.link_ms, prepack);
}

std::string progress_line(const search::RoundStats& r, int budget, std::int64_t errors, bool bar) {
  double rate = r.elapsed_seconds > 0 ? static_cast<double>(r.trials) / r.elapsed_seconds : 0;
  double eta =
      rate > 0 ? static_cast<double>(std::max<std::int64_t>(0, budget - r.trials)) / rate : 0;
  std::string accuracy =
      r.model_accuracy >= 0 ? fmt::format("{:.2f}", r.model_accuracy) : std::string("-");
  std::string stats = fmt::format("{:>5}/{} trials  best {:8.2f} GFLOPS  {:5.1f} trials/s  "
                                  "{} errors  model acc {}  ETA {:.0f}s",
                                  r.trials, budget, r.best_gflops, rate, errors, accuracy, eta);
  if (!bar)
    return fmt::format("round {:>3}: {}  (sampled {}, predicted {}, measured {}; {:.2f}s sample, "
                       "{:.2f}s measure, {:.2f}s update)\n",
                       r.round, stats, r.sampled, r.predicted, r.measured, r.sample_seconds,
                       r.measure_seconds, r.update_seconds);
  int width = 24;
  int filled =
      budget > 0 ? static_cast<int>(width * std::min<double>(1.0, 1.0 * r.trials / budget)) : 0;
  return fmt::format("\r[{}{}] {}", std::string(filled, '#'), std::string(width - filled, '.'),
                     stats);
}

std::string summary(const search::TuneResult& result, const std::string& op_file,
                    const std::string& schedule_file, const std::string& log_file) {
  std::string out;
  out += fmt::format("stopped: {}\n", result.stop_reason);
  out += fmt::format("trials: {} ({} errors), {} programs scored by the model, {:.1f} s in all\n",
                     result.trials, result.errors, result.predictions, result.seconds);
  double measuring = 0;
  for (const record::Record& r : result.records)
    measuring += r.result.build_seconds + r.result.run_seconds;
  out += fmt::format("device time measuring: {:.1f} s (build + run + check)\n", measuring);
  if (!result.best) {
    out += "no valid config was measured\n";
    return out;
  }
  const record::Record& b = *result.best;
  if (result.confirmations > 0)
    out += fmt::format("confirmed: the best configs timed again, {} timings in {:.1f} s; the best "
                       "logged was {:.2f} GFLOPS on one timing\n",
                       result.confirmations, result.confirm_seconds, result.first_best_gflops);
  out += fmt::format("best: {:.2f} GFLOPS, {:.4f} ms (trial {}{})\n", b.gflops(),
                     b.result.median() * 1e3, b.trial,
                     result.confirmations > 0 ? ", the median of its timings" : "");
  if (result.naive && result.naive->result.ok()) {
    const double speedup = result.naive->result.median() / b.result.median();
    if (result.naive->config.program() == b.config.program())
      out += fmt::format("naive schedule: {:.2f} GFLOPS; no tuned config beat it: the best is the "
                         "naive schedule itself\n",
                         result.naive->gflops());
    else if (speedup < 1)
      out += fmt::format("naive schedule: {:.2f} GFLOPS; no tuned config beat it (the best is "
                         "{:.2f}x it: try more trials)\n",
                         result.naive->gflops(), speedup);
    else
      out += fmt::format("naive schedule: {:.2f} GFLOPS; speedup {:.1f}x\n", result.naive->gflops(),
                         speedup);
  }
  for (const search::TuneResult::Start& s : result.starts) {
    if (s.seconds <= 0)
      out += fmt::format("start schedule (trial {}) failed: {} ({})\n", s.first.trial,
                         record::error_name(s.first.result.error), s.first.result.message);
    else if (s.first.config.program() == b.config.program())
      out += fmt::format("start schedule (trial {}): the best; no config found was faster\n",
                         s.first.trial);
    else
      out += fmt::format("start schedule (trial {}): {:.2f} GFLOPS (median of {} timing{}); the "
                         "best is {:.2f}x it\n",
                         s.first.trial, s.first.task.flops / s.seconds / 1e9, s.timings,
                         s.timings == 1 ? "" : "s", s.seconds / b.result.median());
  }
  if (!schedule_file.empty()) {
    out += fmt::format("best schedule written to {}\n", schedule_file);
    out += fmt::format("  see it:    kiln dump {} --schedule {} --stage loopnest\n", op_file,
                       shell_quote(schedule_file));
    out += fmt::format("  time it:   kiln run {} --schedule {}\n", op_file,
                       shell_quote(schedule_file));
  }
  if (!log_file.empty())
    out += fmt::format("  replay it: kiln replay {} --task {}\n", shell_quote(log_file),
                       b.task.workload_key);
  return out;
}

std::string best_table(const std::vector<const record::Record*>& best) {
  std::string out = fmt::format("{:<18} {:<28} {:>9} {:>11} {:>6}  {:<14} {}\n", "op", "params",
                                "GFLOPS", "time (ms)", "trial", "cpu", "workload key");
  for (const record::Record* r : best) {
    std::string params;
    for (const ir::Param& p : r->task.params)
      params += fmt::format("{}{}={}", params.empty() ? "" : " ", p.name, p.value);
    out += fmt::format("{:<18} {:<28} {:>9.2f} {:>11.4f} {:>6}  {:<14} {}\n", r->task.op_name,
                       params, r->gflops(), r->result.median() * 1e3, r->trial, r->target.cpu,
                       r->task.workload_key);
  }
  return out;
}

std::string curve_table(const std::vector<record::TuningCurve>& curves) {
  std::string out = fmt::format("{:<36} {:<28} {:>7} {:>9} {:>9}\n", "run", "task", "trials",
                                "GFLOPS", "seconds");
  auto secs = [](double s) { return s < 0 ? std::string("?") : fmt::format("{:.1f}", s); };
  for (const record::TuningCurve& c : curves) {
    for (const record::CurvePoint& p : c.points) {
      if (p.trials > c.trials)
        continue; // the run stopped before; its end is the last row
      out += fmt::format("{:<36} {:<28} {:>7} {:>9.1f} {:>9}\n", c.run, c.workload_key, p.reached,
                         p.best_gflops, secs(p.seconds));
    }
    out += fmt::format("{:<36} {:<28} {:>7} {:>9.1f} {:>9}  end of run, {:.2f} trials/s{}\n", c.run,
                       c.workload_key, c.trials, c.best_gflops, secs(c.seconds),
                       c.seconds > 0 ? c.trials / c.seconds : 0.0,
                       c.repeats > 0 ? fmt::format("; best confirmed by {} more timings", c.repeats)
                                     : std::string());
  }
  return out;
}

std::string describe_evaluation(const model::Evaluation& e) {
  std::string out = fmt::format(
      "{} programs of {} tasks: pairwise accuracy {:.3f}, top-1 {:.3f}, top-5 {:.3f}\n"
      "  pairwise without near-ties (labels within {:.0f}%): {:.3f}; mean per task {:.3f} "
      "({:.3f} without near-ties)\n",
      e.programs, e.tasks, e.pairwise, e.top1, e.top5, model::Evaluation::kNoiseGap * 100,
      e.pairwise_gap, e.pairwise_task_mean, e.pairwise_task_mean_gap);
  // Both lists are in task name order; a task without a valid best has no
  // top-1 entry.
  std::map<std::string, double> pairwise_of(e.pairwise_per_task.begin(), e.pairwise_per_task.end());
  for (const auto& [task, score] : e.top1_per_task) {
    auto p = pairwise_of.find(task);
    out += p == pairwise_of.end()
               ? fmt::format("  {:<34} top-1 {:.3f}\n", task, score)
               : fmt::format("  {:<34} top-1 {:.3f}  pairwise {:.3f}\n", task, score, p->second);
  }
  return out;
}

std::string task_table(const graph::Network& net, const std::string& model) {
  std::string out =
      fmt::format("{}: {} nodes, {:.2f} M parameters, {} fused groups, {} tasks\n", model,
                  net.graph.nodes.size(), static_cast<double>(net.graph.parameter_count()) / 1e6,
                  net.groups.size(), net.tasks.size());
  out += fmt::format("{:>4}  {:<44} {:>6} {:>10}  {:<18} {}\n", "task", "key", "weight", "MFLOP",
                     "output", "fused ops");
  double total = 0;
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    const graph::Task& task = net.tasks[t];
    const double mflop = task.dag.flop_count() / 1e6;
    total += mflop * task.weight();
    const int out_tensor =
        net.kernels[static_cast<std::size_t>(task.groups.front())].arguments.back();
    out += fmt::format(
        "{:>4}  {:<44} {:>6} {:>10.1f}  {:<18} {}\n", t, task.key, task.weight(), mflop,
        fmt::format("[{}]", fmt::join(net.graph.tensor(out_tensor).shape, ",")), task.ops);
  }
  out += fmt::format("total: {:.1f} MFLOP a run (each task's FLOPs times its weight)\n", total);
  return out;
}

std::string network_tune_table(const graph::Network& net, const network::NetworkTuneResult& r) {
  std::string out = fmt::format("stopped: {}; {} trials in {:.1f} s, log {}\n", r.stop_reason,
                                r.trials, r.seconds, r.log);
  out += fmt::format("{:>4}  {:<44} {:>6} {:>6} {:>11} {:>7} {:>9}  {}\n", "task", "key", "weight",
                     "trials", "best ms", "share", "vs naive", "stopped");
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    const network::TaskOutcome& o = r.tasks[t];
    const double best = o.best ? o.best->result.median() * 1e3 : -1;
    const double weighted = best * net.tasks[t].weight();
    const std::string speedup =
        o.best && o.naive && o.naive->result.ok()
            ? fmt::format("{:.1f}x", o.naive->result.median() / o.best->result.median())
            : std::string("-");
    const std::string share = best < 0 || r.estimate_ms <= 0
                                  ? std::string("-")
                                  : fmt::format("{:.1f}%", 100.0 * weighted / r.estimate_ms);
    out += fmt::format("{:>4}  {:<44} {:>6} {:>6} {:>11} {:>7} {:>9}  {}\n", t, net.tasks[t].key,
                       net.tasks[t].weight(), o.trials,
                       best < 0 ? std::string("-") : fmt::format("{:.4f}", best), share, speedup,
                       o.stop_reason);
  }
  out += r.estimate_ms < 0
             ? std::string("network estimate: none (a task has no measured program yet; give "
                           "every task at least one round)\n")
             : fmt::format("network estimate: {:.3f} ms (sum of weight x best latency)\n",
                           r.estimate_ms);
  return out;
}

} // namespace kiln::tool
