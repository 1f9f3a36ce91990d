// kiln evaluate: how well a model ranks logged configs.
#include "command.h"
#include "common.h"
#include "output.h"

#include "kiln/model/evaluation.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/search/dataset.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

namespace kiln::tool {

namespace {
struct EvaluateFlags {
  std::string model;
  std::vector<std::string> data;
};
} // namespace

static int run(const EvaluateFlags& f) {
  auto m = model::XGBoostModel::load(f.model);
  if (!m)
    return fail(m.error());
  auto log = load_logs_verbose(f.data);
  if (!log)
    return fail(log.error());
  auto samples = samples_of(log->records);
  if (!samples)
    return fail(samples.error());
  const std::vector<std::string> cpus = search::record_cpus(log->records);
  if (cpus.size() > 1)
    fmt::print("all {} CPUs ({}):\n", cpus.size(), fmt::join(cpus, ", "));
  fmt::print("{}", describe_evaluation(model::evaluate(*m, *samples)));
  // Each machine's records on their own: how the model ranks for that CPU.
  if (cpus.size() > 1)
    for (const std::string& cpu : cpus) {
      auto of_cpu = samples_of(search::split_unseen_cpu(log->records, cpu).test);
      if (!of_cpu)
        return fail(of_cpu.error());
      fmt::print("\n{}:\n{}", cpu, describe_evaluation(model::evaluate(*m, *of_cpu)));
    }
  return 0;
}

Command add_evaluate_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<EvaluateFlags>();
  CLI::App* cmd = app.add_subcommand("evaluate", "how well a model ranks logged configs");
  cmd->add_option("model", f->model, "model file")->required();
  cmd->add_option("data", f->data, "logs (JSON lines)")->required();
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
