#include "kiln/search/progress.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::search {

std::string progress_line(const RoundStats& r, int budget, std::int64_t errors, bool bar) {
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

std::string summary(const TuneResult& result, const std::string& op_file,
                    const std::string& schedule_file, const std::string& log_file) {
  std::string out;
  out += fmt::format("stopped: {}\n", result.stop_reason);
  out += fmt::format("trials: {} ({} errors), {} programs scored by the model, {:.1f} s in all\n",
                     result.trials, result.errors, result.predictions, result.seconds);
  double measuring = 0;
  for (const measure::Record& r : result.records)
    measuring += r.result.build_seconds + r.result.run_seconds;
  out += fmt::format("device time measuring: {:.1f} s (build + run + check)\n", measuring);
  if (!result.best) {
    out += "no valid config was measured\n";
    return out;
  }
  const measure::Record& b = *result.best;
  if (result.confirmations > 0)
    out += fmt::format("confirmed: the best configs timed again, {} timings in {:.1f} s; the best "
                       "logged was {:.2f} GFLOPS on one timing\n",
                       result.confirmations, result.confirm_seconds, result.first_best_gflops);
  out += fmt::format("best: {:.2f} GFLOPS, {:.4f} ms (trial {}{})\n", b.gflops(),
                     b.result.median() * 1e3, b.trial,
                     result.confirmations > 0 ? ", the median of its timings" : "");
  if (result.naive && result.naive->result.ok())
    out += fmt::format("naive schedule: {:.2f} GFLOPS; speedup {:.1f}x\n", result.naive->gflops(),
                       result.naive->result.median() / b.result.median());
  for (const TuneResult::Start& s : result.starts) {
    if (s.seconds <= 0)
      out += fmt::format("start schedule (trial {}) failed: {} ({})\n", s.first.trial,
                         measure::error_name(s.first.result.error), s.first.result.message);
    else if (s.first.config.key() == b.config.key())
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
                       schedule_file);
    out += fmt::format("  time it:   kiln run {} --schedule {}\n", op_file, schedule_file);
  }
  if (!log_file.empty())
    out += fmt::format("  replay it: kiln replay {} --task {}\n", log_file, b.task.workload_key);
  return out;
}

} // namespace kiln::search
