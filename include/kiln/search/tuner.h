// The tuner loop for one task. One online round is four stages (docs/design.md):
// sample and predict (the strategy proposes configs, ranked by the cost
// model), measure (build, run, check), update (append the records to the
// log, retrain the model on everything measured). Offline tuning runs the
// strategy on a trained model only and measures at most the final picks;
// hybrid lets the model filter the space to a short list and measures that.
#ifndef KILN_SEARCH_TUNER_H
#define KILN_SEARCH_TUNER_H

#include "kiln/measure/measurer.h"
#include "kiln/model/cost_model.h"
#include "kiln/model/sample.h"
#include "kiln/record/record.h"
#include "kiln/record/tuning_log.h"
#include "kiln/search/search_space.h"
#include "kiln/search/strategy.h"
#include "kiln/support/stopwatch.h"
#include "kiln/support/target.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::search {

enum class Mode : std::uint8_t { Online, Offline, Hybrid };
std::string_view mode_name(Mode m);
std::optional<Mode> parse_mode(std::string_view name);

struct TuneOptions {
  Mode mode = Mode::Online;
  std::string strategy = "evolutionary";
  StrategyOptions strategy_options;
  int trials = 200;               ///< measurement budget (online, hybrid)
  double time_budget_seconds = 0; ///< 0: no limit
  int batch = 16;                 ///< configs measured per round
  int early_stop = 0;             ///< stop after this many trials without a better one (0: off)
  std::uint64_t seed = 1;
  int verify_top = 1;            ///< offline: measure this many final picks (0: none)
  int offline_rounds = 8;        ///< offline / hybrid: prediction rounds of the strategy
  double measure_fraction = 0.5; ///< hybrid: share of the time budget spent measuring
  bool measure_naive = true;     ///< online: trial 0 is the naive schedule (the baseline)
  /// Online and hybrid: schedules measured first, in the trial budget (a
  /// backend's own schedule, a hand-written one): they are in the race for
  /// the best, so the run never ends slower than they are, and the model
  /// learns from them. Configs measured already (a resumed log) are not
  /// measured again.
  std::vector<record::Config> start_configs;
  /// Online and hybrid: after the last round, the `confirm_top` best configs
  /// are timed `confirm_timings` more times each, in turn, and the best is
  /// the config with the best median over all its timings (0: off). Extra
  /// measurements, outside the trial budget.
  int confirm_top = 4;
  int confirm_timings = 4;
  /// Online: retrain the cost model once its training set has grown by this
  /// fraction since it last trained (0: after every round). Training from
  /// scratch costs time in proportion to the set, and a round adds little
  /// to a large set, as in a network's run, where the tasks share one set
  /// (`--retrain-growth`).
  double retrain_growth = 0;
  std::string run; ///< label in records; default "<mode>/<strategy>/seed=<seed>"
  /// Online: propose and retrain while the previous batch is measured
  /// (Measurer::submit), the proposals made with the model of the batches
  /// before it. For measurers that do not share this process's cores (a
  /// cluster job's ranks): the search's time hides behind the measuring.
  bool pipeline = false;
};

/// What the cost model learns from: features and seconds (0: an error) of
/// every measured program, and how many of them it last trained on.
struct TrainingPool {
  std::vector<model::Measured> samples;
  std::size_t trained_on = 0;
};

/// What one round did (also a line of the log).
using RoundStats = record::RoundRecord;

struct TuneResult {
  std::optional<record::Record> best;
  std::optional<record::Record> naive;
  /// A start config (TuneOptions::start_configs) as the run judged it.
  struct Start {
    record::Record first; ///< its first measurement (a resumed log's, if it was measured there)
    double seconds = 0;   ///< the median of all its timings, as the best is judged (0: failed)
    int timings = 0;
  };
  std::vector<Start> starts;
  std::vector<RoundStats> rounds;
  std::vector<record::Record> records; ///< this run's
  std::int64_t trials = 0;
  std::int64_t confirmations = 0; ///< timings of the best configs again, after the trials
  double confirm_seconds = 0;
  /// The best config's GFLOPS as first logged, before its confirmation
  /// timings (0 when there were none).
  double first_best_gflops = 0;
  std::int64_t errors = 0;
  std::int64_t predictions = 0;
  double seconds = 0;
  double predicted_score = 0; ///< offline: the model's score of its pick
  std::string stop_reason;
};

/// Where records go and what they say about the task and the machine (the
/// task itself is the search space's DAG).
struct TaskSetup {
  std::string source; ///< the op file, for records
  Target target;
  record::LogWriter* log = nullptr; ///< may be null
};

class Tuner {
public:
  Tuner(TaskSetup task, const SearchSpace& space, measure::Measurer& measurer,
        model::CostModel& model, TuneOptions options);

  /// Continues from earlier records of this task: nothing measured there is
  /// measured again, the model learns from them, trial numbers continue.
  /// Records measured on another CPU (record::target_match not Exact) never
  /// count as measured here, for the best, the baseline or training: the
  /// best few of their configs are measured here first, as seeds.
  void resume(const std::vector<record::Record>& records);
  /// Configs measured first, with resume()'s seeds, before the first round
  /// (the nearest shape's, refitted): in the trial budget, learnt from like
  /// any trial; those measured already are skipped. Before start().
  void seed(const std::vector<record::Config>& configs);

  /// Runs until the budget is spent; `progress` is called after each round.
  Expected<TuneResult> run(const std::function<void(const RoundStats&)>& progress = nullptr);

  // Online tuning a round at a time, for a caller that shares one budget
  // among several tasks (the network tuner), in place of run():
  /// Measures the naive schedule and the start configs.
  std::optional<Error> start();
  /// Proposes, measures and learns from one batch of at most `n` configs.
  /// A space with nothing left to propose sets stop_reason().
  RoundStats round(int n, const std::function<void(const RoundStats&)>& progress = nullptr);
  /// Times the best configs again (confirm_top) and returns the result.
  TuneResult finish();
  /// Trials measured since start(), and why the task cannot go on (empty
  /// while it can).
  std::int64_t trials() const;
  const std::string& stop_reason() const;
  /// No better config in the last early_stop trials.
  bool stalled() const;
  /// The best valid record so far (this run's or a resumed log's).
  const std::optional<record::Record>& best() const { return best_; }
  /// Learn into and train on `pool` instead of this task's records alone:
  /// one cost model over the records of several tasks (labelled within
  /// each task). Set before resume() and start().
  void share_training(TrainingPool* pool) { shared_training_ = pool; }

private:
  /// A point the strategy proposed, on its way to a record.
  struct Candidate {
    Point point;
    record::Config config;
    std::optional<schedule::State> state; ///< nullopt: the point's steps do not apply
    std::string invalid;                  ///< why, when they do not
    double score = 0;                     ///< the model's, NaN when unscored
  };
  /// A batch of candidates: proposed, then measured, then records.
  struct Batch {
    std::vector<Candidate> candidates;
    std::vector<schedule::ProgramKey> programs;
    RoundStats stats;
  };
  /// The proposed points not measured yet (each program once), their
  /// programs counted as measured from now on.
  Batch prepare(const std::vector<Point>& points, const std::vector<double>& scores);
  /// The batch's records from its results: learnt, counted, logged.
  std::vector<record::Record> conclude(const Batch& batch,
                                       const std::vector<record::MeasureResult>& results,
                                       TuneResult& result);
  std::vector<record::Record> measure_points(const std::vector<Point>& points, TuneResult& result,
                                             const std::vector<double>& scores = {});
  /// Measures states (one batch); each failed state is an invalid-schedule
  /// result without a measurement.
  std::vector<record::MeasureResult> measure(const std::vector<Candidate>& candidates);
  /// measure() in two halves, for the pipelined run.
  void submit(const std::vector<Candidate>& candidates);
  std::vector<record::MeasureResult> collect(const std::vector<Candidate>& candidates);
  Expected<TuneResult> run_pipelined(const std::function<void(const RoundStats&)>& progress);
  void finish_round(RoundStats& st, TuneResult& result,
                    const std::function<void(const RoundStats&)>& progress);
  /// An online round's end, once its records are in: the stale-round
  /// count, its figures, the retrain, then finish_round.
  void end_round(RoundStats& st, const std::vector<record::Record>& records, Stopwatch& stage,
                 const std::function<void(const RoundStats&)>& progress);
  record::Record make_record(const record::Config& config, const record::MeasureResult& r);
  void learn(const record::Record& r, const schedule::ProgramKey& program,
             const std::optional<Point>& point);
  Candidate candidate_of(const record::Config& config) const;
  void measure_fixed(const record::Config& config, TuneResult& result);
  void measure_starts(TuneResult& result);
  void judge_starts(TuneResult& result) const;
  void retrain();
  /// Whether the training set grew enough since the model last trained
  /// (TuneOptions::retrain_growth).
  bool retrain_due();
  bool out_of_time(double spent) const;
  void confirm_best(TuneResult& result);
  Expected<TuneResult> run_online(const std::function<void(const RoundStats&)>& progress);
  Expected<TuneResult> run_offline();
  Expected<TuneResult> run_hybrid(const std::function<void(const RoundStats&)>& progress);

  TaskSetup task_;
  record::TaskInfo info_;
  const SearchSpace& space_;
  measure::Measurer& measurer_;
  model::CostModel& model_;
  TuneOptions options_;
  std::mt19937_64 rng_;
  SearchContext ctx_; ///< its measured_programs: every program measured
  TrainingPool& pool() { return shared_training_ ? *shared_training_ : training_; }
  std::vector<model::Measured>& training() { return pool().samples; }
  TrainingPool training_;
  TrainingPool* shared_training_ = nullptr;
  /// An online run in progress (start() to finish()).
  struct OnlineRun {
    std::unique_ptr<SearchStrategy> strategy;
    Stopwatch clock;
    TuneResult result;
    int stale_rounds = 0;
    int round = 0;
  };
  std::optional<OnlineRun> online_;
  std::vector<record::Record> valid_; ///< every valid record of the task, repeats included
  std::optional<record::Record> best_;
  std::optional<record::Record> naive_;
  std::vector<record::Config> seeds_; ///< other CPUs' and shapes' best configs, measured first
  std::int64_t next_trial_ = 0;
  std::int64_t last_improvement_ = 0;
};

} // namespace kiln::search

#endif
