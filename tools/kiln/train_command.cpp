// kiln train: train a cost model on logs.
#include "command.h"
#include "common.h"
#include "output.h"

#include "kiln/codegen/target.h"
#include "kiln/model/evaluation.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/search/dataset.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

namespace kiln::tool {

namespace {
struct TrainFlags {
  std::vector<std::string> data, holdout_ops;
  std::string out = "kiln.model", holdout = "none", prior;
  // Offline training defaults: the best held-out ranking of the shipped
  // datasets (docs/features.md, "Training"); the online tuner keeps the
  // library's.
  model::XGBoostParams xgb = model::offline_training_params();
  std::string objective = model::to_string(model::offline_training_params().objective);
};
} // namespace

static int run(TrainFlags& f) {
  f.xgb.objective = *model::objective_from_string(f.objective);
  auto log = load_logs_verbose(f.data);
  if (!log)
    return fail(log.error());
  search::Split split{log->records, {}};
  if (f.holdout == "shapes") {
    split = search::split_unseen_shapes(log->records);
  } else if (f.holdout == "ops") {
    split = search::split_unseen_ops(log->records, f.holdout_ops);
  } else if (f.holdout.rfind("cpu=", 0) == 0) {
    const std::string cpu = f.holdout.substr(4);
    const std::vector<std::string> cpus = search::record_cpus(log->records);
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end() || cpus.size() < 2)
      return fail(Error("bad-option",
                        fmt::format("--holdout cpu={}: the logs hold records of {}; name one of "
                                    "them, and give logs of at least two CPUs",
                                    cpu, fmt::join(cpus, ", "))));
    split = search::split_unseen_cpu(log->records, cpu);
  } else if (f.holdout != "none") {
    return fail(Error("bad-option",
                      fmt::format("--holdout {}: use none, shapes, ops or cpu=NAME", f.holdout)));
  }
  auto train = samples_of(split.train);
  if (!train)
    return fail(train.error());
  model::XGBoostModel m(f.xgb);
  if (!f.prior.empty()) {
    // Continue from the prior's trees with its own settings (the options
    // above apply to a model trained from nothing).
    auto prior = model::XGBoostModel::load(f.prior);
    if (!prior)
      return fail(prior.error());
    m = std::move(*prior);
    m.keep_as_prior();
    fmt::print("prior: {} ({} trees); training adds up to {} trees on top of it\n", f.prior,
               m.rounds(), m.params().continue_rounds);
  }
  m.set_target(codegen::host_target().cpu);
  Stopwatch clock;
  m.train(*train);
  fmt::print("trained on {} programs ({} rows, {} trees) in {:.1f} s\n", m.last_training().programs,
             m.last_training().rows, m.rounds(), clock.elapsed_ms() / 1e3);
  if (auto err = m.save(f.out))
    return fail(*err);
  fmt::print("model written to {}\n", f.out);
  if (split.test.empty())
    return 0;
  std::string held = f.out + ".holdout.jsonl";
  auto writer = record::LogWriter::open(held);
  if (!writer)
    return fail(writer.error());
  if (auto err = (*writer)->append(split.test))
    return fail(*err);
  auto test = samples_of(split.test);
  if (!test)
    return fail(test.error());
  fmt::print("held out ({}; written to {}):\n{}", f.holdout, held,
             describe_evaluation(model::evaluate(m, *test)));
  return 0;
}

Command add_train_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<TrainFlags>();
  model::XGBoostParams& xgb = f->xgb;
  CLI::App* cmd = app.add_subcommand("train", "train a cost model on logs");
  cmd->add_option("data", f->data, "logs (JSON lines)")->required();
  cmd->add_option("-o,--output", f->out, "the model file")->capture_default_str();
  cmd->add_option("--holdout", f->holdout,
                  "none | shapes | ops | cpu=NAME: hold tasks (or a machine's records) out to "
                  "evaluate on")
      ->capture_default_str();
  cmd->add_option("--seed", xgb.seed, "seed of XGBoost's subsampling and of the rank pairs")
      ->capture_default_str();
  cmd->add_option("--prior", f->prior,
                  "a trained model to keep and correct with the data (transfer to a new machine "
                  "or shapes; docs/features.md \"Transfer\")");
  cmd->add_option("--holdout-op", f->holdout_ops, "with --holdout ops: an op to hold out");
  cmd->add_option("--max-depth", xgb.max_depth, "XGBoost tree depth")->capture_default_str();
  cmd->add_option("--eta", xgb.eta, "XGBoost learning rate")->capture_default_str();
  cmd->add_option("--min-child-weight", xgb.min_child_weight, "XGBoost min_child_weight")
      ->capture_default_str();
  cmd->add_option("--min-weight", xgb.min_weight,
                  "least sample weight (weights are labels; above 0 slow configs count too)")
      ->capture_default_str();
  cmd->add_option("--objective", f->objective,
                  "rank (pairs within a task) | pack-sum (Ansor's regression); docs/features.md")
      ->check(CLI::IsMember({"rank", "pack-sum"}))
      ->capture_default_str();
  cmd->add_option("--max-rounds", xgb.max_rounds, "most boosting rounds")->capture_default_str();
  cmd->add_option("--subsample", xgb.subsample, "XGBoost subsample")->capture_default_str();
  cmd->add_option("--colsample", xgb.colsample, "XGBoost colsample_bytree")->capture_default_str();
  cmd->add_option("--max-bin", xgb.max_bin, "XGBoost histogram bins per column")
      ->check(CLI::Range(2, 65536))
      ->capture_default_str();
  cmd->add_option("--pair-gap", xgb.pair_gap,
                  "rank: skip pairs whose labels differ by less than this fraction")
      ->capture_default_str();
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
