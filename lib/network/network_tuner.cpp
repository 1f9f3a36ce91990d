#include "kiln/network/network_tuner.h"

#include "kiln/measure/measurer.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/record/nearest_shape.h"
#include "kiln/record/tuning_log.h"
#include "kiln/search/search_space.h"
#include "kiln/search/session.h"
#include "kiln/search/strategy.h"
#include "kiln/search/tuner.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace kiln::network {

namespace {

/// What tunes one task: its space, measurer and tuner.
struct TaskTuning {
  std::unique_ptr<search::SearchSpace> space;
  std::unique_ptr<measure::Measurer> measurer;
  std::unique_ptr<search::Tuner> tuner;
  bool started = false;
};

double seconds_of(const std::optional<record::Record>& r) {
  return r && r->result.ok() ? r->result.median() : no_latency;
}

/// Tasks with one fused op name and FLOPs within a factor of the golden
/// ratio are similar (Ansor's similarity tag): the speed per FLOP one of
/// them reached is a fair goal for the others, while a 1x1 conv of a
/// fraction of the work never runs at a large 3x3 conv's speed and would
/// keep the scheduler's gradient for it large whatever it gains.
std::string tag_of(const graph::Task& task) {
  const double flops = static_cast<double>(task.dag.flop_count());
  return fmt::format("{}_{}", task.dag.name(),
                     static_cast<int>(std::log(flops + 1) / std::log(1.618)));
}

/// The label of every record of the run: the scheduler's name tells the
/// runs of two schedulers apart in one report.
std::string run_label(const NetworkTuneOptions& options) {
  return fmt::format("network/{}/{}/seed={}", scheduler_name(options.scheduler.kind),
                     options.session.tune.strategy, options.session.tune.seed);
}

} // namespace

Expected<NetworkTuneResult> tune_network(const graph::Network& net, const std::string& model_path,
                                         const Target& target, const NetworkTuneOptions& options,
                                         const std::function<void(const NetworkRound&)>& progress) {
  const search::SessionOptions& so = options.session;
  if (auto e = search::check_options(so))
    return *e;
  if (so.tune.mode != search::Mode::Online)
    return Error("bad-option", "a model is tuned online; --mode offline and hybrid tune one op "
                               "(give a task's op file from kiln tasks --write-ops)");
  if (!so.space.empty() && so.space != "sketch")
    return Error("bad-option", "a model's tasks are tuned in their sketch spaces; --space "
                               "template applies to one op");
  NetworkTuneResult result;
  result.log =
      so.log.empty() ? std::filesystem::path(model_path).stem().string() + ".jsonl" : so.log;
  std::vector<record::Record> history;
  if (so.resume) {
    auto log = record::load_logs({result.log});
    if (!log)
      return log.error();
    history = std::move(log->records);
    result.warnings = std::move(log->warnings);
  }
  std::vector<record::Record> neighbours = history;
  if (!so.transfer_logs.empty()) {
    auto log = record::load_logs(so.transfer_logs);
    if (!log)
      return log.error();
    neighbours.insert(neighbours.end(), std::make_move_iterator(log->records.begin()),
                      std::make_move_iterator(log->records.end()));
    for (std::string& w : log->warnings)
      result.warnings.push_back(std::move(w));
  }
  auto writer = record::LogWriter::open(result.log);
  if (!writer)
    return writer.error();

  // Every task's measurer, each with its reference checked, before any task
  // is tuned.
  const measure::MeasurerFactory make_measurer =
      so.make_measurer ? so.make_measurer : measure::make_program_measurer;
  std::vector<TaskTuning> tasks(net.tasks.size());
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    auto measurer = make_measurer(net.tasks[t].dag, target, so.measure);
    if (!measurer)
      return Error(measurer.error().id(), fmt::format("task {} ({}): {}", t, net.tasks[t].key,
                                                      measurer.error().message()));
    tasks[t].measurer = std::move(*measurer);
  }
  model::XGBoostModel model(model::online_training_params());
  if (!so.model_file.empty()) {
    auto loaded = search::load_pretrained_model(so.model_file, so.default_model);
    if (!loaded)
      return loaded.error();
    model = std::move(*loaded);
  }
  search::TrainingPool training;
  std::vector<TaskProgress> progress_of(net.tasks.size());
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    const graph::Task& task = net.tasks[t];
    auto space = search::make_search_space(task.dag, target, "sketch", "");
    if (!space)
      return space.error();
    if (auto e = search::check_strategy_fits(so.tune.strategy, **space))
      return *e;
    tasks[t].space = std::move(*space);
    search::TuneOptions to = so.tune;
    to.time_budget_seconds = 0; // the network's budget is checked here
    to.run = run_label(options);
    tasks[t].tuner = std::make_unique<search::Tuner>(
        search::TaskSetup{fmt::format("{}#{}", model_path, task.key), target, &**writer},
        *tasks[t].space, *tasks[t].measurer, model, to);
    tasks[t].tuner->share_training(&training);
    if (!history.empty())
      tasks[t].tuner->resume(history);
    const bool has_records =
        std::any_of(neighbours.begin(), neighbours.end(),
                    [&](const record::Record& r) { return r.task.workload_key == task.key; });
    if (!has_records) {
      std::vector<record::Config> seeds;
      std::string from;
      for (record::NearestConfig& c :
           record::nearest_shape_configs(neighbours, task.dag, target, search::kNearestSeeds)) {
        if (from.empty())
          from = c.describe();
        seeds.push_back(std::move(c.config));
      }
      if (!seeds.empty()) {
        result.notes.push_back(fmt::format("task {} ({}) started from {} config{} of the nearest "
                                           "tuned shape, first {}",
                                           t, task.key, seeds.size(), seeds.size() == 1 ? "" : "s",
                                           from));
        tasks[t].tuner->seed(seeds);
      }
    }
    TaskProgress& p = progress_of[t];
    p.weight = task.weight();
    p.flops = task.dag.flop_count();
    p.tag = tag_of(task);
    if (tasks[t].tuner->best())
      p.best.push_back(seconds_of(tasks[t].tuner->best()));
  }

  record::NetworkRecord table{
      run_label(options), model_path, std::string(scheduler_name(options.scheduler.kind)), {}};
  for (const graph::Task& task : net.tasks)
    table.tasks.push_back(
        {task.key, task.dag.name(), static_cast<double>(task.weight()), task.dag.flop_count()});
  if (auto e = (*writer)->append(table))
    return *e;

  TaskScheduler scheduler(options.scheduler);
  Stopwatch clock;
  result.stop_reason = "trial budget spent";
  for (int round = 0;; ++round) {
    if (result.trials >= so.tune.trials)
      break;
    if (so.tune.time_budget_seconds > 0 &&
        clock.elapsed_ms() / 1e3 >= so.tune.time_budget_seconds) {
      result.stop_reason = "time budget spent";
      break;
    }
    const int t = scheduler.next(progress_of);
    if (t < 0) {
      result.stop_reason = "every task stopped early or exhausted its space";
      break;
    }
    TaskTuning& task = tasks[static_cast<std::size_t>(t)];
    TaskProgress& p = progress_of[static_cast<std::size_t>(t)];
    const std::int64_t before = task.tuner->trials();
    if (!task.started) {
      if (auto e = task.tuner->start())
        return *e;
      task.started = true;
    }
    const int n = static_cast<int>(std::min<std::int64_t>(
        so.tune.batch, std::max<std::int64_t>(so.tune.trials - result.trials, 1)));
    NetworkRound nr;
    nr.task_round = task.tuner->round(n);
    result.trials += task.tuner->trials() - before;
    ++p.rounds;
    p.best.push_back(seconds_of(task.tuner->best()));
    if (!task.tuner->stop_reason().empty() || task.tuner->stalled())
      p.done = true;
    nr.round = round;
    nr.task = t;
    nr.trials = result.trials;
    const double estimate = estimated_latency(progress_of);
    nr.estimate_ms = estimate < no_latency ? estimate * 1e3 : -1;
    nr.elapsed_seconds = clock.elapsed_ms() / 1e3;
    result.rounds.push_back(nr);
    if (progress)
      progress(nr);
  }
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    TaskOutcome out;
    out.rounds = progress_of[t].rounds;
    if (tasks[t].started) {
      search::TuneResult r = tasks[t].tuner->finish();
      out.trials = r.trials;
      out.best = r.best;
      out.naive = r.naive;
      // Only what stopped the task before the network's budget ran out.
      out.stop_reason = tasks[t].tuner->stalled()
                            ? fmt::format("no better config in {} trials", so.tune.early_stop)
                        : progress_of[t].done ? r.stop_reason
                                              : "";
    } else {
      out.best = tasks[t].tuner->best();
      out.stop_reason = "not tuned in this run";
    }
    if (!progress_of[t].best.empty() || out.best)
      progress_of[t].best.push_back(seconds_of(out.best));
    result.tasks.push_back(std::move(out));
  }
  const double estimate = estimated_latency(progress_of);
  result.estimate_ms = estimate < no_latency ? estimate * 1e3 : -1;
  if (!so.save_model.empty())
    if (auto e = model.save(so.save_model))
      return *e;
  result.seconds = clock.elapsed_ms() / 1e3;
  return result;
}

} // namespace kiln::network
