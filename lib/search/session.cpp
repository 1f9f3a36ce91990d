#include "kiln/search/session.h"

#include "kiln/record/history.h"
#include "kiln/record/nearest_shape.h"
#include "kiln/schedule/transform_step.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>

namespace kiln::search {

Expected<model::XGBoostModel> load_pretrained_model(const std::string& file,
                                                    const std::string& default_file) {
  const std::string& path = file.empty() ? default_file : file;
  auto m = model::XGBoostModel::load(path);
  if (!m && file.empty())
    return Error(m.error().id(),
                 fmt::format("{}; pass --model FILE (kiln train writes one)", m.error().message()));
  return m;
}

std::optional<Error> check_options(const SessionOptions& options) {
  const TuneOptions& t = options.tune;
  auto bad = [](std::string message) { return Error("bad-option", std::move(message)); };
  if (t.mode != Mode::Offline && t.trials < 1)
    return bad(fmt::format("--trials {}: an {} run measures at least one config; give 1 or more",
                           t.trials, mode_name(t.mode)));
  if (t.batch < 1)
    return bad(
        fmt::format("--batch {}: a round measures at least one config; give 1 or more", t.batch));
  if (!(t.time_budget_seconds >= 0 && std::isfinite(t.time_budget_seconds)))
    return bad(
        fmt::format("--time-budget {:g}: give seconds, or 0 for no limit", t.time_budget_seconds));
  if (t.early_stop < 0)
    return bad(fmt::format("--early-stop {}: give a number of trials, or 0 for off", t.early_stop));
  if (t.verify_top < 0)
    return bad(fmt::format("--verify-top {}: give 0 or more picks", t.verify_top));
  if (t.confirm_top < 0 || t.confirm_timings < 0)
    return bad(fmt::format("--confirm-top {} --confirm-timings {}: give 0 or more of each",
                           t.confirm_top, t.confirm_timings));
  if (!(t.retrain_growth >= 0 && std::isfinite(t.retrain_growth)))
    return bad(fmt::format("--retrain-growth {:g}: give a fraction of 0 or more (0: every round)",
                           t.retrain_growth));
  if (!(t.measure_fraction > 0 && t.measure_fraction <= 1))
    return bad(fmt::format("--measure-fraction {:g}: give a share in (0, 1]", t.measure_fraction));
  return measure::check_options(options.measure);
}

TuningSession::~TuningSession() = default;

/// What a resumed run does with records of its task measured on another
/// CPU (Tuner::resume), or nothing when there are none.
static std::optional<std::string> foreign_records_note(const std::vector<record::Record>& records,
                                                       const std::string& workload_key,
                                                       const Target& target) {
  std::int64_t count = 0;
  std::set<std::string> cpus;
  for (const record::Record& r : records)
    if (r.task.workload_key == workload_key &&
        record::target_match(r.target, target) != record::TargetMatch::Exact) {
      ++count;
      cpus.insert(r.target.cpu.empty() ? r.target.triple : r.target.cpu);
    }
  if (count == 0)
    return std::nullopt;
  return fmt::format("{} record{} of this task {} measured on another CPU ({}), not this {}: "
                     "they do not count as measured here (nor as the best or the baseline); "
                     "their best configs are measured here first",
                     count, count == 1 ? "" : "s", count == 1 ? "was" : "were",
                     fmt::join(cpus, ", "), target.cpu);
}

Expected<std::unique_ptr<TuningSession>>
TuningSession::create(const ir::ComputeDAG& dag, const Target& target, SessionOptions options) {
  if (auto err = check_options(options))
    return *err;
  std::unique_ptr<TuningSession> s(new TuningSession());
  s->dag_ = dag;
  s->target_ = target;
  // The measurer first: an op whose reference fails ends the session before
  // a model is loaded.
  const measure::MeasurerFactory make =
      options.make_measurer ? options.make_measurer : measure::make_program_measurer;
  auto measurer = make(dag, target, options.measure);
  if (!measurer)
    return measurer.error();
  s->measurer_ = std::move(*measurer);
  if (!options.model_file.empty() || options.tune.mode != Mode::Online) {
    auto loaded = load_pretrained_model(options.model_file, options.default_model);
    if (!loaded)
      return loaded.error();
    // Retraining keeps the loaded trees and corrects them with this run's
    // records, rather than replacing them at the first retrain.
    loaded->keep_as_prior();
    s->model_ = std::make_unique<model::XGBoostModel>(std::move(*loaded));
  } else {
    s->model_ = std::make_unique<model::XGBoostModel>(model::online_training_params());
  }
  auto space = make_search_space(dag, target, options.space, options.template_name);
  if (!space)
    return space.error();
  if (auto err = check_strategy_fits(options.tune.strategy, **space))
    return *err;
  s->space_ = std::move(*space);
  for (const std::string& file : options.start_schedules) {
    auto state = schedule::State::load(dag, file);
    if (!state)
      return state.error();
    record::Config start;
    start.steps = state->steps();
    options.tune.start_configs.push_back(std::move(start));
  }
  s->log_path_ = options.log.empty() ? dag.name() + ".jsonl" : options.log;
  if (options.resume) {
    auto log = record::load_logs({s->log_path_});
    if (!log)
      return log.error();
    s->history_ = std::move(log->records);
    s->warnings_ = std::move(log->warnings);
    if (auto note = foreign_records_note(s->history_, dag.workload_key(), target))
      s->warnings_.push_back(*note);
  }
  if (auto err = s->find_nearest_seeds(options.transfer_logs))
    return *err;
  auto writer = record::LogWriter::open(s->log_path_);
  if (!writer)
    return writer.error();
  s->log_ = std::move(*writer);
  s->options_ = std::move(options);
  return s;
}

std::optional<Error> TuningSession::find_nearest_seeds(const std::vector<std::string>& logs) {
  const std::string key = dag_.workload_key();
  auto own = [&](const record::Record& r) { return r.task.workload_key == key; };
  if (std::any_of(history_.begin(), history_.end(), own))
    return std::nullopt;
  std::vector<record::Record> records = history_;
  if (!logs.empty()) {
    auto log = record::load_logs(logs);
    if (!log)
      return log.error();
    for (std::string& w : log->warnings)
      warnings_.push_back(std::move(w));
    if (std::any_of(log->records.begin(), log->records.end(), own)) {
      notes_.push_back(fmt::format("--transfer: the logs hold records of this very workload; "
                                   "they are not measured here first (tune with --log LOG "
                                   "--resume to continue from them)"));
      return std::nullopt;
    }
    records.insert(records.end(), std::make_move_iterator(log->records.begin()),
                   std::make_move_iterator(log->records.end()));
  }
  for (record::NearestConfig& c :
       record::nearest_shape_configs(records, dag_, target_, kNearestSeeds)) {
    notes_.push_back(fmt::format("measured first: nearest shape, {}", c.describe()));
    nearest_seeds_.push_back(std::move(c.config));
  }
  if (nearest_seeds_.empty() && !logs.empty())
    notes_.push_back(fmt::format("--transfer: no record of another shape of {} fits it; the "
                                 "run starts cold",
                                 dag_.name()));
  return std::nullopt;
}

/// Writes a schedule file; a failed write is an Error.
static std::optional<Error> write_schedule_file(const std::string& path, const std::string& op_name,
                                                const std::vector<schedule::Step>& steps) {
  std::ofstream out(path);
  out << schedule::schedule_file_text(op_name, steps);
  out.close();
  if (!out)
    return Error("cannot-write", fmt::format("cannot write the schedule file '{}': {}; check the "
                                             "directory exists and is writable",
                                             path, std::strerror(errno)));
  return std::nullopt;
}

Expected<SessionResult> TuningSession::run(const std::function<void(const RoundStats&)>& progress) {
  KILN_ASSERT(log_ != nullptr, "a tuning session runs once");
  Tuner tuner({options_.source, target_, log_.get()}, *space_, *measurer_, *model_, options_.tune);
  if (!history_.empty())
    tuner.resume(history_);
  tuner.seed(nearest_seeds_);
  auto tuned = tuner.run(progress);
  if (!tuned)
    return tuned.error();
  SessionResult result;
  result.tune = std::move(*tuned);
  result.log = log_path_;
  if (result.tune.best) {
    result.schedule_file = log_path_ + ".best.json";
    if (auto err =
            write_schedule_file(result.schedule_file, dag_.name(), result.tune.best->config.steps))
      return *err;
  } else if (!result.tune.records.empty() && options_.tune.mode == Mode::Offline) {
    result.schedule_file = log_path_ + ".pick.json";
    result.offline_pick = true;
    if (auto err = write_schedule_file(result.schedule_file, dag_.name(),
                                       result.tune.records.front().config.steps))
      return *err;
  }
  if (!options_.save_model.empty())
    if (auto err = model_->save(options_.save_model))
      return *err;
  log_.reset(); // flushed and closed: the caller may read it now
  return result;
}

} // namespace kiln::search
