// The tuner loop for one task. One online round is four stages (DESIGN.md):
// sample and predict (the strategy proposes configs, ranked by the cost
// model), measure (build, run, check), update (append the records to the
// log, retrain the model on everything measured). Offline tuning runs the
// strategy on a trained model only and measures at most the final picks;
// hybrid lets the model filter the space to a short list and measures that.
#ifndef KILN_SEARCH_TUNER_H
#define KILN_SEARCH_TUNER_H

#include "kiln/codegen/target.h"
#include "kiln/measure/measurer.h"
#include "kiln/measure/record.h"
#include "kiln/measure/tuning_log.h"
#include "kiln/model/cost_model.h"
#include "kiln/search/search_space.h"
#include "kiln/search/strategy.h"

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
  std::vector<measure::Config> start_configs;
  /// Online and hybrid: after the last round, the `confirm_top` best configs
  /// are timed `confirm_timings` more times each, in turn, and the best is
  /// the config with the best median over all its timings (0: off). Extra
  /// measurements, outside the trial budget.
  int confirm_top = 4;
  int confirm_timings = 4;
  std::string run; ///< label in records; default "<mode>/<strategy>/seed=<seed>"
};

/// What one round did (also a line of the log).
using RoundStats = measure::RoundRecord;

struct TuneResult {
  std::optional<measure::Record> best;
  std::optional<measure::Record> naive;
  /// A start config (TuneOptions::start_configs) as the run judged it.
  struct Start {
    measure::Record first; ///< its first measurement (a resumed log's, if it was measured there)
    double seconds = 0;    ///< the median of all its timings, as the best is judged (0: failed)
    int timings = 0;
  };
  std::vector<Start> starts;
  std::vector<RoundStats> rounds;
  std::vector<measure::Record> records; ///< this run's
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

/// Where records go and what they say about the task and the machine.
struct TaskSetup {
  ir::ComputeDAG dag;
  std::string source; ///< the op file, for records
  Target target;
  measure::LogWriter* log = nullptr; ///< may be null
};

class Tuner {
public:
  Tuner(TaskSetup task, const SearchSpace& space, measure::Measurer& measurer,
        model::CostModel& model, TuneOptions options);

  /// Continues from earlier records of this task: nothing measured there is
  /// measured again, the model learns from them, trial numbers continue.
  void resume(const std::vector<measure::Record>& records);

  /// Runs until the budget is spent; `progress` is called after each round.
  Expected<TuneResult> run(const std::function<void(const RoundStats&)>& progress = nullptr);

private:
  struct Trial {
    Point point;
    measure::Record record;
  };
  std::vector<measure::Record> measure_points(const std::vector<Point>& points, TuneResult& result,
                                              const std::vector<double>& scores = {});
  void finish_round(RoundStats& st, TuneResult& result,
                    const std::function<void(const RoundStats&)>& progress);
  measure::Record make_record(const measure::Config& config, const measure::MeasureResult& r);
  void learn(const measure::Record& r, const std::optional<Point>& point);
  void measure_fixed(const measure::Config& config, TuneResult& result);
  void measure_starts(TuneResult& result);
  void judge_starts(TuneResult& result) const;
  void retrain();
  bool out_of_time(double spent) const;
  void confirm_best(TuneResult& result);
  Expected<TuneResult> run_online(const std::function<void(const RoundStats&)>& progress);
  Expected<TuneResult> run_offline();
  Expected<TuneResult> run_hybrid(const std::function<void(const RoundStats&)>& progress);

  TaskSetup task_;
  measure::TaskInfo info_;
  const SearchSpace& space_;
  measure::Measurer& measurer_;
  model::CostModel& model_;
  TuneOptions options_;
  std::mt19937_64 rng_;
  SearchContext ctx_;
  std::vector<std::pair<model::ProgramFeatures, double>>
      training_;                                     ///< features, seconds (0: error)
  std::unordered_set<std::string> measured_configs_; ///< Config::key()
  std::vector<measure::Record> valid_; ///< every valid record of the task, repeats included
  std::optional<measure::Record> best_;
  std::optional<measure::Record> naive_;
  std::int64_t next_trial_ = 0;
  std::int64_t last_improvement_ = 0;
};

} // namespace kiln::search

#endif
