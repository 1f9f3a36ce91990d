#include "kiln/search/tuner.h"

#include "short_list.h"

#include "kiln/model/metrics.h"
#include "kiln/model/program_features.h"
#include "kiln/record/history.h"
#include "kiln/support/stopwatch.h"
#include "kiln/support/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

namespace kiln::search {

std::string_view mode_name(Mode m) {
  switch (m) {
  case Mode::Online:
    return "online";
  case Mode::Offline:
    return "offline";
  case Mode::Hybrid:
    return "hybrid";
  }
  return "?";
}

std::optional<Mode> parse_mode(std::string_view name) {
  for (Mode m : {Mode::Online, Mode::Offline, Mode::Hybrid})
    if (mode_name(m) == name)
      return m;
  return std::nullopt;
}

/// The model's pairwise accuracy on one batch of measurements (one task),
/// from the scores the records carry; -1 when none was scored.
static double batch_accuracy(const std::vector<record::Record>& records) {
  std::vector<model::Scored> scored;
  for (const record::Record& r : records)
    if (!std::isnan(r.predicted))
      scored.push_back({"", r.predicted, r.result.ok() ? 1.0 / r.result.median() : 0.0});
  return model::judged_pairwise_accuracy(scored).value_or(-1);
}

Tuner::Tuner(TaskSetup task, const SearchSpace& space, measure::Measurer& measurer,
             model::CostModel& model, TuneOptions options)
    : task_(std::move(task)), info_(record::TaskInfo::from_dag(space.dag(), task_.source)),
      space_(space), measurer_(measurer), model_(model), options_(std::move(options)),
      rng_(options_.seed), ctx_(space_, model_, rng_, model::hardware_of(task_.target)) {
  if (options_.run.empty())
    options_.run =
        fmt::format("{}/{}/seed={}", mode_name(options_.mode), options_.strategy, options_.seed);
}

void Tuner::finish_round(RoundStats& st, TuneResult& result,
                         const std::function<void(const RoundStats&)>& progress) {
  st.run = options_.run;
  st.workload_key = info_.workload_key;
  result.rounds.push_back(st);
  if (task_.log)
    (void)task_.log->append(st);
  if (progress)
    progress(st);
}

record::Record Tuner::make_record(const record::Config& config, const record::MeasureResult& r) {
  record::Record rec;
  rec.run = options_.run;
  rec.task = info_;
  rec.target = task_.target;
  rec.config = config;
  rec.result = r;
  rec.trial = next_trial_++;
  rec.timestamp =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  rec.kiln_version = version();
  return rec;
}

void Tuner::learn(const record::Record& r, const schedule::ProgramKey& program,
                  const std::optional<Point>& point) {
  ctx_.measured_programs.insert(program);
  double seconds = r.result.ok() ? r.result.median() : 0;
  if (point)
    ctx_.measured.push_back({*point, seconds > 0 ? 1.0 / seconds : 0.0});
  model::ProgramFeatures f;
  if (point) {
    f = ctx_.features(*point);
  } else if (auto s = schedule::State::replay(space_.dag(), r.config.steps)) {
    f = model::program_features(*s, model::hardware_of(task_.target));
  }
  if (!f.rows.empty())
    training().push_back({std::move(f), seconds, info_.workload_key});
  if (r.config.steps.empty() && r.config.template_name.empty() && r.result.ok())
    naive_ = r;
  if (r.result.ok())
    valid_.push_back(r);
  if (r.result.ok() && (!best_ || r.result.median() < best_->result.median())) {
    best_ = r;
    last_improvement_ = r.trial;
  }
}

void Tuner::retrain() {
  TrainingPool& p = pool();
  if (p.samples.empty())
    return;
  model_.train(model::label_samples(p.samples));
  p.trained_on = p.samples.size();
}

bool Tuner::retrain_due() {
  const TrainingPool& p = pool();
  return p.trained_on == 0 || static_cast<double>(p.samples.size()) >=
                                  static_cast<double>(p.trained_on) * (1 + options_.retrain_growth);
}

/// How many of another CPU's best configs a resumed run measures first.
constexpr std::size_t kForeignSeeds = 4;

void Tuner::resume(const std::vector<record::Record>& records) {
  std::vector<const record::Record*> foreign;
  for (const record::Record& r : records) {
    if (r.task.workload_key != info_.workload_key)
      continue;
    next_trial_ = std::max(next_trial_, r.trial + 1);
    if (record::target_match(r.target, task_.target) != record::TargetMatch::Exact) {
      foreign.push_back(&r);
      continue;
    }
    std::optional<Point> point = space_.point_of(r.config);
    std::optional<schedule::ProgramKey> program = r.config.program();
    if (!program && point)
      program = ctx_.key(*point); // a template record of knobs alone
    if (!program)
      continue;
    if (ctx_.measured_programs.count(*program)) {
      // A program timed again (confirmation timings): it counts in the
      // judgement of the best, not in training.
      if (r.result.ok())
        valid_.push_back(r);
      continue;
    }
    learn(r, *program, point);
  }
  for (const record::Record* r : record::ranked_configs(foreign)) {
    if (seeds_.size() == kForeignSeeds)
      break;
    std::optional<schedule::ProgramKey> program = r->config.program();
    if (program && !ctx_.measured_programs.count(*program))
      seeds_.push_back(r->config);
  }
  if (!training().empty() && options_.mode == Mode::Online && retrain_due())
    retrain();
}

void Tuner::seed(const std::vector<record::Config>& configs) {
  KILN_ASSERT(!online_, "seed() before start()");
  seeds_.insert(seeds_.end(), configs.begin(), configs.end());
}

Tuner::Candidate Tuner::candidate_of(const record::Config& config) const {
  Candidate c;
  c.config = config;
  c.score = std::nan("");
  auto state = schedule::State::replay(space_.dag(), config.steps);
  if (state)
    c.state = std::move(*state);
  else
    c.invalid = state.error().message();
  return c;
}

std::vector<record::MeasureResult> Tuner::measure(const std::vector<Candidate>& candidates) {
  submit(candidates);
  return collect(candidates);
}

void Tuner::submit(const std::vector<Candidate>& candidates) {
  std::vector<const schedule::State*> states;
  for (const Candidate& c : candidates)
    if (c.state)
      states.push_back(&*c.state);
  measurer_.submit(states);
}

std::vector<record::MeasureResult> Tuner::collect(const std::vector<Candidate>& candidates) {
  std::vector<record::MeasureResult> measured = measurer_.collect();
  std::vector<record::MeasureResult> out;
  std::size_t next = 0;
  for (const Candidate& c : candidates) {
    if (c.state) {
      out.push_back(std::move(measured[next++]));
      continue;
    }
    record::MeasureResult invalid;
    invalid.error = record::MeasureError::InvalidSchedule;
    invalid.message = c.invalid;
    out.push_back(std::move(invalid));
  }
  return out;
}

/// Measures one config outside the strategy's proposals (the naive
/// schedule, a start config): a trial like the others, logged and learnt.
void Tuner::measure_fixed(const record::Config& config, TuneResult& result) {
  std::vector<Candidate> one{candidate_of(config)};
  record::Record r = make_record(config, measure(one).front());
  learn(r, *config.program(), space_.point_of(config));
  ++result.trials;
  result.errors += r.result.ok() ? 0 : 1;
  result.records.push_back(r);
  if (task_.log)
    (void)task_.log->append({r});
}

void Tuner::measure_starts(TuneResult& result) {
  for (const record::Config& c : options_.start_configs) {
    const schedule::ProgramKey program = *c.program();
    if (!ctx_.measured_programs.count(program)) {
      if (result.trials >= options_.trials)
        break;
      measure_fixed(c, result);
      result.starts.push_back({result.records.back()});
      continue;
    }
    // Measured before this run (a resumed log): its first valid record.
    for (const record::Record& r : valid_)
      if (r.config.program() == program) {
        result.starts.push_back({r});
        break;
      }
  }
  for (const record::Config& c : seeds_)
    if (result.trials < options_.trials && !ctx_.measured_programs.count(*c.program()))
      measure_fixed(c, result);
}

/// After the confirmation timings: each start config judged as the best
/// is, by the median of all its timings, so that the two compare.
void Tuner::judge_starts(TuneResult& result) const {
  std::vector<const record::Record*> valid;
  for (const record::Record& r : valid_)
    valid.push_back(&r);
  std::vector<const record::Record*> judged = record::config_medians(valid);
  for (TuneResult::Start& s : result.starts) {
    const std::optional<schedule::ProgramKey> program = s.first.config.program();
    s.timings =
        static_cast<int>(std::count_if(valid.begin(), valid.end(), [&](const record::Record* r) {
          return r->config.program() == program;
        }));
    for (const record::Record* j : judged)
      if (j->config.program() == program)
        s.seconds = j->result.median();
  }
}

bool Tuner::out_of_time(double spent) const {
  return options_.time_budget_seconds > 0 && spent >= options_.time_budget_seconds;
}

/// Rounds of confirmation at most (each confirms `confirm_top` more configs).
constexpr int kMaxConfirmPasses = 4;

/// The winner's curse: each config is timed once, on a machine whose speed
/// drifts by tens of percent within minutes, so the fastest of a thousand
/// single timings is partly luck: the best logged timing is often one taken
/// in a fast moment, and the kernel runs far slower beside others. The
/// best few configs are timed again, in turn, so each sees the machine in
/// every state the others do, and the best is judged by the median of all
/// its timings, as `kiln best` and the report judge it from the log.
void Tuner::confirm_best(TuneResult& result) {
  if (options_.confirm_top <= 0 || options_.confirm_timings <= 0 || !best_)
    return;
  Stopwatch clock;
  result.first_best_gflops = best_->gflops();
  auto valid = [this] {
    std::vector<const record::Record*> out;
    for (const record::Record& r : valid_)
      out.push_back(&r);
    return out;
  };
  // By median alone, to see whether a config timed once now looks best.
  auto ranked = [&] {
    std::vector<const record::Record*> out = record::config_medians(valid());
    std::stable_sort(out.begin(), out.end(), [](const record::Record* a, const record::Record* b) {
      return a->result.median() < b->result.median();
    });
    return out;
  };
  // Timed again, the confirmed configs lose their luck, and a config timed
  // once may now rank first on a lucky timing of its own: then the next
  // few are confirmed too, until the best by median is a confirmed one or
  // the passes run out. The best confirmed config wins either way.
  std::set<schedule::ProgramKey> confirmed;
  for (int pass = 0; pass < kMaxConfirmPasses; ++pass) {
    std::vector<const record::Record*> order = ranked();
    if (order.empty() || confirmed.count(*order.front()->config.program()))
      break;
    std::vector<Candidate> configs;
    for (const record::Record* r : order)
      if (static_cast<int>(configs.size()) < options_.confirm_top &&
          confirmed.insert(*r->config.program()).second)
        configs.push_back(candidate_of(r->config));
    // The start configs are timed with the first pass's, however they
    // ranked: a start is compared with the best, and one slow first
    // timing of it must not make the best look much faster than it is.
    if (pass == 0)
      for (const TuneResult::Start& s : result.starts)
        if (s.first.result.ok() && confirmed.insert(*s.first.config.program()).second)
          configs.push_back(candidate_of(s.first.config));
    for (int t = 0; t < options_.confirm_timings; ++t) {
      std::vector<record::MeasureResult> results = measure(configs);
      std::vector<record::Record> records;
      for (size_t i = 0; i < configs.size(); ++i)
        records.push_back(make_record(configs[i].config, results[i]));
      for (const record::Record& r : records) {
        if (r.result.ok())
          valid_.push_back(r);
        result.errors += r.result.ok() ? 0 : 1;
        result.records.push_back(r);
      }
      result.confirmations += static_cast<std::int64_t>(records.size());
      if (task_.log)
        if (auto err = task_.log->append(records)) {
          result.stop_reason = "cannot write the log: " + err->message();
          pass = kMaxConfirmPasses;
          break;
        }
    }
  }
  // As `kiln best` will judge it from the log: the best confirmed config,
  // all of them timed in the same minutes (record::ranked_configs).
  best_ = *record::ranked_configs(valid()).front();
  result.confirm_seconds = clock.elapsed_ms() / 1e3;
}

Tuner::Batch Tuner::prepare(const std::vector<Point>& points, const std::vector<double>& scores) {
  Batch batch;
  for (size_t i = 0; i < points.size(); ++i) {
    std::optional<schedule::ProgramKey> program = ctx_.key(points[i]);
    // A program measured already (or twice in one batch) is never measured
    // again; strategies propose unmeasured programs only.
    if (!program || !ctx_.measured_programs.insert(*program).second)
      continue;
    Candidate c;
    c.point = points[i];
    c.config = space_.config(points[i]);
    c.score = i < scores.size() ? scores[i] : std::nan("");
    auto state = space_.state(points[i]);
    if (state)
      c.state = std::move(*state);
    else
      c.invalid = state.error().message();
    batch.candidates.push_back(std::move(c));
    batch.programs.push_back(*program);
  }
  return batch;
}

std::vector<record::Record> Tuner::conclude(const Batch& batch,
                                            const std::vector<record::MeasureResult>& results,
                                            TuneResult& result) {
  std::vector<record::Record> records;
  for (size_t i = 0; i < batch.candidates.size(); ++i) {
    const Candidate& c = batch.candidates[i];
    record::Record r = make_record(c.config, results[i]);
    if (std::isfinite(c.score))
      r.predicted = c.score;
    learn(r, batch.programs[i], c.point);
    ++result.trials;
    result.errors += r.result.ok() ? 0 : 1;
    records.push_back(r);
    result.records.push_back(r);
  }
  if (task_.log)
    if (auto err = task_.log->append(records))
      result.stop_reason = "cannot write the log: " + err->message();
  return records;
}

std::vector<record::Record> Tuner::measure_points(const std::vector<Point>& points,
                                                  TuneResult& result,
                                                  const std::vector<double>& scores) {
  Batch batch = prepare(points, scores);
  return conclude(batch, measure(batch.candidates), result);
}

/// Rounds in a row without a new measurement before a run gives up.
constexpr int kMaxStaleRounds = 20;

static double gflops_of(const std::optional<record::Record>& r) {
  return r ? r->gflops() : 0;
}

Expected<TuneResult> Tuner::run(const std::function<void(const RoundStats&)>& progress) {
  switch (options_.mode) {
  case Mode::Online:
    return run_online(progress);
  case Mode::Offline:
    return run_offline();
  case Mode::Hybrid:
    return run_hybrid(progress);
  }
  return Error("bad-option", "unknown mode");
}

std::optional<Error> Tuner::start() {
  KILN_ASSERT(!online_, "start() once");
  auto strategy = make_strategy(options_.strategy, options_.strategy_options);
  if (!strategy)
    return strategy.error();
  online_.emplace();
  online_->strategy = std::move(*strategy);
  TuneResult& result = online_->result;
  if (options_.measure_naive && !naive_ && options_.trials > 0 &&
      !ctx_.measured_programs.count(*record::Config{}.program()))
    measure_fixed(record::Config{}, result);
  measure_starts(result);
  return std::nullopt;
}

bool Tuner::stalled() const {
  return options_.early_stop > 0 && best_ && next_trial_ - last_improvement_ > options_.early_stop;
}

std::int64_t Tuner::trials() const {
  return online_ ? online_->result.trials : 0;
}

const std::string& Tuner::stop_reason() const {
  static const std::string none;
  return online_ ? online_->result.stop_reason : none;
}

RoundStats Tuner::round(int n, const std::function<void(const RoundStats&)>& progress) {
  KILN_ASSERT(online_, "start() before round()");
  TuneResult& result = online_->result;
  SearchStrategy& strategy = *online_->strategy;
  RoundStats st;
  st.round = online_->round++;
  Stopwatch stage;
  std::int64_t before = ctx_.predictions;
  std::vector<Point> points = strategy.propose(ctx_, n);
  st.sampled = static_cast<std::int64_t>(points.size());
  st.predicted = ctx_.predictions - before;
  if (points.empty()) {
    result.stop_reason = "no unmeasured config left in the space";
    return st;
  }
  std::vector<double> scores;
  if (strategy.uses_model() && model_.trained())
    scores = ctx_.predict(points);
  st.sample_seconds = stage.lap_ms() / 1e3;
  std::vector<record::Record> records = measure_points(points, result, scores);
  st.measure_seconds = stage.lap_ms() / 1e3;
  end_round(st, records, stage, progress);
  return st;
}

void Tuner::end_round(RoundStats& st, const std::vector<record::Record>& records, Stopwatch& stage,
                      const std::function<void(const RoundStats&)>& progress) {
  TuneResult& result = online_->result;
  st.measured = static_cast<std::int64_t>(records.size());
  // Proposals that all turn out to be programs measured already (other
  // points, same steps) spend no budget: stop before that loops forever.
  online_->stale_rounds = records.empty() ? online_->stale_rounds + 1 : 0;
  if (online_->stale_rounds >= kMaxStaleRounds)
    result.stop_reason = fmt::format("{} rounds in a row proposed only configs measured "
                                     "already; the space looks exhausted",
                                     kMaxStaleRounds);
  for (const record::Record& r : records)
    st.errors += r.result.ok() ? 0 : 1;
  st.model_accuracy = batch_accuracy(records);
  if (online_->strategy->uses_model() && retrain_due())
    retrain();
  st.update_seconds = stage.lap_ms() / 1e3;
  st.best_gflops = gflops_of(best_);
  st.trials = result.trials;
  st.elapsed_seconds = online_->clock.elapsed_ms() / 1e3;
  finish_round(st, result, progress);
}

TuneResult Tuner::finish() {
  KILN_ASSERT(online_, "start() before finish()");
  TuneResult& result = online_->result;
  if (result.stop_reason.empty())
    result.stop_reason = "trial budget spent";
  confirm_best(result);
  judge_starts(result);
  result.best = best_;
  result.naive = naive_;
  result.predictions = ctx_.predictions;
  result.seconds = online_->clock.elapsed_ms() / 1e3;
  TuneResult out = std::move(result);
  online_.reset();
  return out;
}

Expected<TuneResult> Tuner::run_online(const std::function<void(const RoundStats&)>& progress) {
  if (options_.pipeline)
    return run_pipelined(progress);
  if (auto e = start())
    return *e;
  TuneResult& result = online_->result;
  while (result.trials < options_.trials) {
    if (out_of_time(online_->clock.elapsed_ms() / 1e3)) {
      result.stop_reason = "time budget spent";
      break;
    }
    if (stalled()) {
      result.stop_reason = fmt::format("no better config in {} trials", options_.early_stop);
      break;
    }
    round(static_cast<int>(std::min<std::int64_t>(options_.batch, options_.trials - result.trials)),
          progress);
    if (!result.stop_reason.empty())
      break;
  }
  return finish();
}

/// The online loop with one batch always being measured: each round
/// proposes its batch while the one before it is measured, takes that
/// one's results, submits its own, and retrains on everything taken while
/// it is measured. So a batch is proposed with the model of every batch but
/// the one just before it, the same on every run of one seed.
Expected<TuneResult> Tuner::run_pipelined(const std::function<void(const RoundStats&)>& progress) {
  if (auto e = start())
    return *e;
  TuneResult& result = online_->result;
  SearchStrategy& strategy = *online_->strategy;
  std::optional<Batch> flying;
  for (;;) {
    const std::int64_t in_flight =
        flying ? static_cast<std::int64_t>(flying->candidates.size()) : 0;
    const std::int64_t left = options_.trials - result.trials - in_flight;
    std::optional<Batch> next;
    if (left > 0 && result.stop_reason.empty()) {
      if (out_of_time(online_->clock.elapsed_ms() / 1e3))
        result.stop_reason = "time budget spent";
      else if (stalled())
        result.stop_reason = fmt::format("no better config in {} trials", options_.early_stop);
    }
    if (left > 0 && result.stop_reason.empty()) {
      Stopwatch stage;
      RoundStats st;
      st.round = online_->round++;
      const std::int64_t before = ctx_.predictions;
      std::vector<Point> points =
          strategy.propose(ctx_, static_cast<int>(std::min<std::int64_t>(options_.batch, left)));
      st.sampled = static_cast<std::int64_t>(points.size());
      st.predicted = ctx_.predictions - before;
      if (!points.empty()) {
        std::vector<double> scores;
        if (strategy.uses_model() && model_.trained())
          scores = ctx_.predict(points);
        next = prepare(points, scores);
        st.sample_seconds = stage.lap_ms() / 1e3;
        next->stats = st;
      } else if (!flying) {
        result.stop_reason = "no unmeasured config left in the space";
      }
    }
    if (flying) {
      Stopwatch stage;
      RoundStats& st = flying->stats;
      std::vector<record::Record> records = conclude(*flying, collect(flying->candidates), result);
      st.measure_seconds = stage.lap_ms() / 1e3; // the wait for its results
      if (next)
        submit(next->candidates); // measured while this round retrains
      end_round(st, records, stage, progress);
    } else if (next) {
      submit(next->candidates);
    }
    if (!next)
      break;
    flying = std::move(next);
  }
  return finish();
}

Expected<TuneResult> Tuner::run_offline() {
  if (!model_.trained())
    return Error("untrained-model", "offline tuning needs a trained cost model: pass --model FILE "
                                    "(kiln train writes one)");
  auto strategy = make_strategy(options_.strategy, options_.strategy_options);
  if (!strategy)
    return strategy.error();
  if (!(*strategy)->uses_model())
    return Error("bad-option", fmt::format("offline tuning picks with the cost model; the '{}' "
                                           "strategy does not use one (use evolutionary or "
                                           "annealing)",
                                           options_.strategy));
  if (!options_.start_configs.empty())
    return Error("bad-option", "offline tuning measures nothing while it searches, so it cannot "
                               "start from a schedule: tune online or hybrid, or time the "
                               "schedule with kiln run");
  Stopwatch clock;
  TuneResult result;
  auto picks = shortlist(**strategy, ctx_, options_.offline_rounds, options_.batch,
                         options_.time_budget_seconds, clock);
  if (picks.empty()) {
    result.stop_reason = "the strategy proposed no config to pick";
    result.seconds = clock.elapsed_ms() / 1e3;
    return result;
  }
  result.predicted_score = picks.front().first;
  std::vector<Point> verify;
  for (int i = 0; i < options_.verify_top && i < static_cast<int>(picks.size()); ++i)
    verify.push_back(picks[i].second);
  if (!verify.empty()) {
    std::vector<double> scores;
    for (size_t i = 0; i < verify.size(); ++i)
      scores.push_back(picks[i].first);
    measure_points(verify, result, scores);
  }
  RoundStats st;
  st.sampled = static_cast<std::int64_t>(picks.size());
  st.predicted = ctx_.predictions;
  st.measured = result.trials;
  st.best_gflops = gflops_of(best_);
  st.elapsed_seconds = clock.elapsed_ms() / 1e3;
  finish_round(st, result, nullptr);
  if (!best_ && options_.verify_top == 0) {
    // Nothing measured: the pick is reported as an unmeasured record.
    record::MeasureResult none;
    none.message = "not measured (offline pick)";
    record::Record pick = make_record(space_.config(picks.front().second), none);
    pick.predicted = picks.front().first;
    result.records.push_back(pick);
  }
  result.best = best_;
  result.predictions = ctx_.predictions;
  result.seconds = clock.elapsed_ms() / 1e3;
  result.stop_reason = "offline pick made";
  return result;
}

Expected<TuneResult> Tuner::run_hybrid(const std::function<void(const RoundStats&)>& progress) {
  if (!model_.trained())
    return Error("untrained-model", "hybrid tuning needs a trained cost model to filter with: "
                                    "pass --model FILE (kiln train writes one)");
  auto strategy = make_strategy(options_.strategy, options_.strategy_options);
  if (!strategy)
    return strategy.error();
  Stopwatch clock;
  TuneResult result;
  measure_starts(result);
  double predict_budget = options_.time_budget_seconds > 0
                              ? options_.time_budget_seconds * (1 - options_.measure_fraction)
                              : 0;
  auto picks = shortlist(**strategy, ctx_, options_.offline_rounds,
                         std::max(options_.batch, options_.trials), predict_budget, clock);
  const auto left = static_cast<size_t>(std::max<std::int64_t>(0, options_.trials - result.trials));
  picks = cover_families(picks, left, space_);
  double filter_seconds = clock.elapsed_ms() / 1e3;
  for (size_t at = 0; at < picks.size(); at += options_.batch) {
    if (out_of_time(clock.elapsed_ms() / 1e3)) {
      result.stop_reason = "time budget spent";
      break;
    }
    RoundStats st;
    st.round = static_cast<int>(result.rounds.size());
    // The filtering (all the predictions) counts in the first round.
    st.sampled = at == 0 ? static_cast<std::int64_t>(picks.size()) : 0;
    st.predicted = at == 0 ? ctx_.predictions : 0;
    st.sample_seconds = at == 0 ? filter_seconds : 0;
    Stopwatch stage;
    std::vector<Point> batch;
    std::vector<double> scores;
    for (size_t i = at; i < std::min(picks.size(), at + options_.batch); ++i) {
      batch.push_back(picks[i].second);
      scores.push_back(picks[i].first);
    }
    std::vector<record::Record> records = measure_points(batch, result, scores);
    st.measured = static_cast<std::int64_t>(records.size());
    st.model_accuracy = batch_accuracy(records);
    for (const record::Record& r : records)
      st.errors += r.result.ok() ? 0 : 1;
    st.measure_seconds = stage.elapsed_ms() / 1e3;
    st.best_gflops = gflops_of(best_);
    st.trials = result.trials;
    st.elapsed_seconds = clock.elapsed_ms() / 1e3;
    finish_round(st, result, progress);
  }
  if (result.stop_reason.empty())
    result.stop_reason = "short list measured";
  confirm_best(result);
  judge_starts(result);
  result.best = best_;
  result.predictions = ctx_.predictions;
  result.seconds = clock.elapsed_ms() / 1e3;
  return result;
}

} // namespace kiln::search
