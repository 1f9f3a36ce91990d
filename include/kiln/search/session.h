// A tuning session: what `kiln tune` does, as one library call a compiler
// backend can make. It builds the measurer, the cost model, the search
// space and the log writer; resumes from the log; measures start schedules
// first; runs the tuner; and writes the best schedule next to the log.
// `kiln compare` runs the three modes on one budget (compare_modes).
#ifndef KILN_SEARCH_SESSION_H
#define KILN_SEARCH_SESSION_H

#include "kiln/ir/compute_dag.h"
#include "kiln/measure/measurer.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/record/tuning_log.h"
#include "kiln/search/search_space.h"
#include "kiln/search/tuner.h"
#include "kiln/support/target.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::search {

/// Nearest-shape configs a new workload's run measures first
/// (SessionOptions::transfer_logs): a quarter of a default round, the rest
/// left to the search.
inline constexpr std::size_t kNearestSeeds = 4;

struct SessionOptions {
  TuneOptions tune;
  std::string source; ///< the op file, written into every record
  /// "sketch" or "template"; empty: the sketch space unless a template is
  /// named.
  std::string space;
  std::string template_name; ///< with the template space; empty: the one that fits
  measure::MeasureOptions measure;
  /// A trained cost model to start from (`kiln train` writes one); empty:
  /// online runs start untrained, offline and hybrid runs use
  /// `default_model`.
  std::string model_file;
  std::string default_model; ///< the model shipped with kiln
  std::string log;           ///< the tuning log; empty: "<op name>.jsonl"
  bool resume = false;       ///< continue from the log's records of this task
  /// Schedule files (docs/schedule-format.md) measured first, in the race
  /// for the best.
  std::vector<std::string> start_schedules;
  std::string save_model; ///< write the model trained during the run here
  /// Logs of other shapes of the op (`--transfer`): when neither they nor
  /// the resumed log hold a record of this workload, the best configs of
  /// the nearest tuned shape, refitted (record/nearest_shape.h), are
  /// measured first, in the trial budget. The resumed log's other shapes
  /// count too.
  std::vector<std::string> transfer_logs;
  /// Makes each task's measurer; empty: measure::make_program_measurer
  /// (kiln tune --simulate gives a simulated one, a cluster job spreads
  /// each batch over its ranks).
  measure::MeasurerFactory make_measurer;
};

struct SessionResult {
  TuneResult tune;
  std::string log; ///< the log the records went to
  /// The best schedule (LOG.best.json), or an offline run's unmeasured pick
  /// (LOG.pick.json); empty when there is neither.
  std::string schedule_file;
  bool offline_pick = false;
};

class TuningSession {
public:
  /// Checks the options, loads the model and the log to resume, and builds
  /// the measurer (its reference first: an Error when the naive kernel or
  /// the interpreter fails).
  static Expected<std::unique_ptr<TuningSession>>
  create(const ir::ComputeDAG& dag, const Target& target, SessionOptions options);
  ~TuningSession();

  const SearchSpace& space() const { return *space_; }
  const std::string& log_path() const { return log_path_; }
  /// Lines of the resumed log that were skipped ("LOG:17: skipped: …").
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// What the run starts from besides its own space: the nearest-shape
  /// configs it measures first and the records they came from.
  const std::vector<std::string>& notes() const { return notes_; }

  /// Tunes; `progress` is called after each round.
  Expected<SessionResult> run(const std::function<void(const RoundStats&)>& progress = nullptr);

private:
  TuningSession() = default;
  /// nearest_seeds_ and their notes, when no record of the workload is
  /// known; an Error when a transfer log cannot be read.
  std::optional<Error> find_nearest_seeds(const std::vector<std::string>& logs);
  SessionOptions options_;
  ir::ComputeDAG dag_;
  Target target_;
  std::string log_path_;
  std::vector<std::string> warnings_;
  std::vector<std::string> notes_;
  std::vector<record::Record> history_;
  std::vector<record::Config> nearest_seeds_;
  std::unique_ptr<measure::Measurer> measurer_;
  std::unique_ptr<model::XGBoostModel> model_;
  std::unique_ptr<SearchSpace> space_;
  std::unique_ptr<record::LogWriter> log_;
};

/// A "bad-option" error naming the first option out of its range (by its
/// `kiln tune` flag), or nothing. TuningSession::create and compare_modes
/// check their options so, before anything is measured.
std::optional<Error> check_options(const SessionOptions& options);

/// The model of offline and hybrid runs: `file`, else `default_file` (the
/// shipped one).
Expected<model::XGBoostModel> load_pretrained_model(const std::string& file,
                                                    const std::string& default_file);

/// One mode's run of compare_modes.
struct ModeRun {
  Mode mode = Mode::Online;
  TuneResult result;
  /// Pairwise ranking accuracy on measured configs (-1: none): online, per
  /// round before each update; offline, the pretrained model on the online
  /// run's measurements; hybrid, on its short list.
  double accuracy = -1;
};

struct Comparison {
  std::vector<ModeRun> runs; ///< online, offline, hybrid
  std::string log;
};

/// Online, offline and hybrid on one budget and one log (`kiln compare`):
/// online starts untrained, the others use the pretrained model.
/// `on_mode` is called before each mode starts.
Expected<Comparison> compare_modes(const ir::ComputeDAG& dag, const Target& target,
                                   const SessionOptions& options,
                                   const std::function<void(Mode)>& on_mode = nullptr);

} // namespace kiln::search

#endif // KILN_SEARCH_SESSION_H
