// kiln run MODEL: a whole network with its tasks' best records.
#include "run_model.h"

#include "common.h"

#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/graph/network.h"
#include "kiln/network/network_run.h"

#include <fmt/format.h>

namespace kiln::tool {

/// Each task's time inside the network next to its record's: where the
/// two part, a kernel runs slower after its neighbours than alone.
static void print_profile(const graph::Network& net,
                          const std::vector<network::TaskSchedule>& schedules,
                          const std::vector<double>& group_ms, int repeats) {
  double total = 0;
  for (double ms : group_ms)
    total += ms;
  fmt::print("profile:  each group timed where it runs (median of {}); by task, the slowest "
             "first\n",
             repeats);
  fmt::print("{:>4}  {:<36} {:>6} {:>11} {:>6} {:>11} {:>7}\n", "task", "ops", "weight",
             "network ms", "share", "record ms", "ratio");
  for (const network::TaskProfile& p : network::profile_by_task(net, schedules, group_ms)) {
    const graph::Task& task = net.tasks[static_cast<std::size_t>(p.task)];
    fmt::print("{:>4}  {:<36} {:>6} {:>11.4f} {:>5.1f}% {:>11} {:>7}\n", p.task,
               task.ops.size() > 36 ? task.ops.substr(0, 33) + "..." : task.ops, task.weight(),
               p.network_ms, total > 0 ? 100 * p.network_ms / total : 0.0,
               p.record_ms < 0 ? std::string("-") : fmt::format("{:.4f}", p.record_ms),
               p.record_ms <= 0 ? std::string("-")
                                : fmt::format("{:.2f}", p.network_ms / p.record_ms));
  }
  fmt::print("groups:   {:.3f} ms in all (ratio: network ms / record ms)\n", total);
}

int run_model(const RunModelFlags& f) {
  kiln_rt_set_num_threads(f.threads);
  auto net = graph::load_network(f.model);
  if (!net)
    return fail(net.error());
  Target target = codegen::host_target();
  std::vector<network::TaskSchedule> schedules = network::naive_schedules(*net);
  if (!f.logs.empty()) {
    auto logs = load_logs_verbose(f.logs);
    if (!logs)
      return fail(logs.error());
    const measure::MeasureOptions nearest;
    schedules = network::schedules_from_records(*net, logs->records, target,
                                                f.nearest_shape ? &nearest : nullptr);
  }
  fmt::print("model:    {} ({} nodes, {} groups, {} tasks)\ntarget:   {} {}, {} bits, {} "
             "threads\n",
             f.model, net->graph.nodes.size(), net->groups.size(), net->tasks.size(), target.triple,
             target.cpu, target.vector_bits, kiln_rt_num_threads());
  int from_log = 0, nearest = 0;
  fmt::print("{:>4}  {:<44} {:>6} {:>10}  {}\n", "task", "key", "weight", "record ms", "schedule");
  for (std::size_t t = 0; t < net->tasks.size(); ++t) {
    const network::TaskSchedule& s = schedules[t];
    from_log += s.state.has_value();
    nearest += s.source.starts_with("nearest shape");
    fmt::print("{:>4}  {:<44} {:>6} {:>10}  {}\n", t, net->tasks[t].key, net->tasks[t].weight(),
               s.record_ms < 0 ? std::string("-") : fmt::format("{:.4f}", s.record_ms), s.source);
  }
  if (nearest > 0)
    fmt::print("{} task{} without a record of {} own run{} the nearest tuned shape's schedule\n",
               nearest, nearest == 1 ? "" : "s", nearest == 1 ? "its" : "their",
               nearest == 1 ? "s" : "");
  if (from_log < static_cast<int>(net->tasks.size()))
    fmt::print("{} of {} tasks have no record{} and run naive kernels\n",
               net->tasks.size() - static_cast<std::size_t>(from_log), net->tasks.size(),
               f.logs.empty() ? " (no --log)" : "");
  auto report = network::run_network(*net, schedules, target, f.options);
  if (!report)
    return fail(report.error());
  fmt::print("compile:  {:.0f} ms, prepack {:.1f} ms; activations {:.2f} MB ({:.2f} MB "
             "unshared)\n",
             report->compile_ms, report->prepack_ms, static_cast<double>(report->arena_bytes) / 1e6,
             static_cast<double>(report->unshared_bytes) / 1e6);
  if (report->checked)
    fmt::print("check:    {} against the naive kernels (max abs error {:.3g}, max rel error "
               "{:.3g})\n",
               report->passed ? "passed" : "FAILED", report->max_abs_error, report->max_rel_error);
  fmt::print("latency:  {:.3f} ms (median of {}; min {:.3f} ms)", report->median_ms,
             report->times_ms.size(),
             *std::min_element(report->times_ms.begin(), report->times_ms.end()));
  if (report->estimate_ms >= 0)
    fmt::print("; the tasks' records add up to {:.3f} ms", report->estimate_ms);
  fmt::print("\n");
  if (!report->group_ms.empty())
    print_profile(*net, schedules, report->group_ms, f.options.profile_repeats);
  return report->passed ? 0 : 1;
}

} // namespace kiln::tool
