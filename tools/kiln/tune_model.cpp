// kiln tune MODEL: every task of a network in one run, one log.
#include "tune_model.h"

#include "common.h"
#include "output.h"

#include "kiln/codegen/target.h"
#include "kiln/graph/network.h"
#include "kiln/network/network_tuner.h"

#include <fmt/format.h>

#include <cstdio>

namespace kiln::tool {

int tune_model(CLI::App* cmd, TuneFlags& f, const std::string& scheduler, const ToolContext& ctx) {
  if (!f.op.sets.empty() || !f.op.schedule.empty())
    return fail(Error("bad-option", "--set and --schedule apply to op files, not to a model"));
  auto session = session_options(cmd, f, ctx);
  if (!session)
    return fail(session.error());
  auto kind = network::parse_scheduler(scheduler);
  if (!kind)
    return fail(Error("bad-option", fmt::format("unknown task scheduler '{}'; use gradient or "
                                                "round-robin",
                                                scheduler)));
  auto net = graph::load_network(f.op.file);
  if (!net)
    return fail(net.error());
  network::NetworkTuneOptions options;
  options.session = *session;
  options.scheduler.kind = *kind;
  options.scheduler.seed = f.options.seed;
  Target target = codegen::host_target();
  fmt::print("tuning {} on {} {}: {} tasks ({} groups), {} task scheduler, {} strategy, {} "
             "trials\n",
             f.op.file, target.cpu, target.triple, net->tasks.size(), net->groups.size(), scheduler,
             f.options.strategy, f.options.trials);
  const std::int64_t warm_up = static_cast<std::int64_t>(net->tasks.size()) * f.options.batch;
  if (f.options.trials < warm_up)
    std::fprintf(stderr,
                 "warning: %lld trials do not cover the warm-up round of every task (%zu tasks x "
                 "%d a round = %lld); tasks left without a round have no estimate\n",
                 static_cast<long long>(f.options.trials), net->tasks.size(), f.options.batch,
                 static_cast<long long>(warm_up));
  auto result =
      network::tune_network(*net, f.op.file, target, options, [&](const network::NetworkRound& r) {
        const graph::Task& task = net->tasks[static_cast<std::size_t>(r.task)];
        const double rate = r.elapsed_seconds > 0 ? r.trials / r.elapsed_seconds : 0;
        const std::string estimate =
            r.estimate_ms < 0 ? std::string("(warm-up)") : fmt::format("{:.3f} ms", r.estimate_ms);
        fmt::print("round {:>4}  task {:>2} {:<44} {:>5}/{} trials  task best {:8.2f} GFLOPS  "
                   "network {:>12}  {:5.1f} trials/s\n",
                   r.round, r.task, task.key, r.trials, f.options.trials, r.task_round.best_gflops,
                   estimate, rate);
        std::fflush(stdout);
      });
  if (!result)
    return fail(result.error());
  for (const std::string& n : result->notes)
    fmt::print("{}\n", n);
  for (const std::string& w : result->warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  fmt::print("{}", network_tune_table(*net, *result));
  fmt::print("next: kiln run {} --log {}   (the network end to end)\n"
             "      kiln report {}   (the network view: estimate by trials, tasks)\n",
             shell_quote(f.op.file), shell_quote(result->log), shell_quote(result->log));
  return 0;
}

} // namespace kiln::tool
