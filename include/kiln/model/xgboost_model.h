// The learned cost model: gradient-boosted trees (XGBoost, through its C API)
// over the per-statement rows of ProgramFeatures, as in Ansor. A program's
// score is the sum of its rows' predictions ("pack-sum"); training fits that
// sum to the program's label with Ansor's label-weighted squared error,
// through a custom objective (docs/features.md explains the gradient).
//
// Errors: XGBoost failures, unusable rows and unreadable files are
// kiln::Errors. train() and predict() implement CostModel, whose signatures
// have no error channel: they throw UserError (catch_user_error turns it back
// into an Expected).
#ifndef KILN_MODEL_XGBOOST_MODEL_H
#define KILN_MODEL_XGBOOST_MODEL_H

#include "kiln/model/cost_model.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::model {

/// What training fits (docs/features.md, "Training").
enum class Objective {
  /// Ansor's: the pack-sum regressed on the label, weighted by the label.
  PackSum,
  /// Pairwise ranking within each task: a logistic loss on the difference of
  /// two programs' pack-sums, over every pair of programs of a task whose
  /// labels differ by more than `pair_gap` (relative). Only the order within
  /// a task is learnt, which is what the search uses and what transfers to
  /// unseen shapes: absolute labels differ from task to task.
  Rank,
};

/// "pack-sum" or "rank"; nullopt for anything else.
std::optional<Objective> objective_from_string(const std::string& name);
std::string to_string(Objective objective);

/// Booster and training settings. Defaults follow Ansor's XGBModel where they
/// make sense on one or two cores.
struct XGBoostParams {
  int max_depth = 10;
  double eta = 0.2;
  double min_child_weight = 0;
  /// Ansor uses 0.001, but a split's gain here is on the scale of the
  /// per-row share of a label-weighted residual (labels <= 1), far below
  /// Ansor's: at 0.001 the trees stop splitting long before they fit the
  /// training set, and rank held-out programs worse (docs/features.md).
  double gamma = 0;
  double lambda = 1; ///< L2 regularisation of leaf values (XGBoost's default)
  /// libgomp threads spin: more than one thread on a busy 2-core machine
  /// trains several times slower.
  int nthread = 1;
  /// The columns take few distinct values, so histogram splits equal exact
  /// ones here, and "hist" trains several times faster than "exact" to the
  /// same accuracy.
  std::string tree_method = "hist";
  /// Histogram bins per column (XGBoost's max_bin). Finding splits is most
  /// of the training time, and its cost grows with the bins.
  int max_bin = 256;
  std::uint64_t seed = 0;
  /// train(): at most this many rounds, stopping early when the training loss
  /// has not improved (by more than `min_improvement`, relative) for
  /// `early_stopping_rounds` rounds; the model keeps the trees up to the
  /// best round.
  int max_rounds = 10000;
  int early_stopping_rounds = 50;
  double min_improvement = 1e-4;
  /// continue_training(): at most this many rounds are added.
  int continue_rounds = 100;
  /// A sample's weight is its label (Ansor), so the model spends its
  /// capacity on the fast programs; failed programs (label 0) then teach it
  /// nothing. A floor above 0 keeps them in the fit.
  double min_weight = 0;
  Objective objective = Objective::PackSum;
  /// Rank: pairs whose labels differ by less than this fraction of the
  /// larger are not trained on (they are within measurement noise).
  double pair_gap = 0;
  /// Rank: in a task of n programs, each program is paired with this many
  /// others drawn at random (seeded) when all n(n-1)/2 pairs would be more
  /// than n times this; 0 takes every pair. All pairs made training
  /// quadratic: 4.2 s for one 1000-program task, retrained every round.
  int max_pairs_per_program = 32;
  /// Row and column subsampling per tree (XGBoost's subsample and
  /// colsample_bytree); 1 uses everything.
  double subsample = 1;
  double colsample = 1;

  bool operator==(const XGBoostParams&) const = default;
};

/// The settings `kiln train` uses by default: the rank objective with
/// shallower, subsampled trees and a fixed number of rounds, which ranked
/// unseen shapes and ops best on data/dataset.jsonl (docs/features.md). The
/// training loss of the rank objective keeps falling, so its early stopping
/// never fires; `max_rounds` bounds it.
XGBoostParams offline_training_params();

/// The settings of the model `kiln tune` and `kiln compare` train online
/// from scratch: the library defaults (pack-sum, depth 10, early stopping)
/// with 32 histogram bins.
/// offline_training_params() ranks unseen shapes better but ranks each
/// round's new configs worse online, though it retrains faster
/// (docs/features.md).
XGBoostParams online_training_params();

/// What the last train() or continue_training() did.
struct TrainingStats {
  int programs = 0; ///< samples with at least one row
  int rows = 0;
  int rounds = 0; ///< rounds kept (trees added by this call)
  int rounds_run = 0;
  /// On the training data: label-weighted pack-sum RMSE (pack-sum) or mean
  /// pairwise logistic loss (rank).
  double loss = 0;
};

class XGBoostModel : public CostModel {
public:
  explicit XGBoostModel(XGBoostParams params = {});
  ~XGBoostModel() override;
  XGBoostModel(XGBoostModel&& other) noexcept;
  XGBoostModel& operator=(XGBoostModel&& other) noexcept;
  XGBoostModel(const XGBoostModel&) = delete;
  XGBoostModel& operator=(const XGBoostModel&) = delete;

  /// One score per program (the sum of its rows' predictions), from one
  /// prediction call over the rows of all programs. A program without rows
  /// (its schedule failed to lower) scores -infinity; every other program
  /// scores 0 before training.
  using CostModel::predict;
  std::vector<double> predict(std::span<const ProgramFeatures* const> programs) override;
  /// Retrains from scratch (or from the prior, keep_as_prior) on `samples`
  /// (samples without rows are skipped).
  void train(const std::vector<Sample>& samples) override;
  bool trained() const override { return booster_ != nullptr; }

  /// Adds rounds fitted to the residuals of `samples` (typically the newly
  /// measured ones) on top of the current trees; trains from scratch when
  /// the model is untrained.
  void continue_training(const std::vector<Sample>& samples);

  /// Keeps the current trees as a prior (a model trained on other machines
  /// and shapes): from now on train() does not start from nothing but from
  /// these trees, and adds up to params().continue_rounds trees fitted to
  /// what they get wrong on the samples, as many as improved the ranking of
  /// a held-out half of the samples: what the prior knew survives every
  /// retraining and the local trees correct it more as the local samples
  /// grow (docs/features.md, "Transfer"). The model must be trained.
  void keep_as_prior();
  bool has_prior() const { return !prior_.empty(); }

  /// Writes the model: one JSON header line, then XGBoost's own model bytes
  /// (docs/features.md). Refuses an untrained model.
  std::optional<Error> save(const std::string& path) const;
  /// Reads a model written by save(). A model of another feature version is
  /// refused ("model-feature-version"): its columns mean something else.
  static Expected<XGBoostModel> load(const std::string& path);

  const XGBoostParams& params() const { return params_; }
  /// Takes effect from the next training call.
  void set_params(const XGBoostParams& params) { params_ = params; }
  /// The machine the training data was measured on (recorded in the file).
  const std::string& target() const { return target_; }
  void set_target(std::string target) { target_ = std::move(target); }
  /// Samples the current trees were trained on (train() resets it).
  std::int64_t training_samples() const { return training_samples_; }
  /// Boosting rounds (trees) in the model.
  int rounds() const;
  const TrainingStats& last_training() const { return last_; }

private:
  /// How one fit() runs: from nothing or on top of the current trees, for
  /// at most `max_rounds` rounds; with `stop_early`, it stops once the
  /// training loss has not improved for params().early_stopping_rounds
  /// rounds and keeps the trees up to the best round, otherwise it keeps
  /// every round. With `held_out` (one flag per sample), the flagged
  /// samples get no gradient, every round runs, and the best round is the
  /// one that ranks pairs of flagged samples best, if it beats the first
  /// round by more than the standard error.
  struct FitRun {
    bool from_scratch = false;
    int max_rounds = 0;
    bool stop_early = true;
    const std::vector<char>* held_out = nullptr;
  };
  /// Returns the rounds kept.
  int fit(const std::vector<Sample>& samples, const FitRun& run);
  void restore_prior();

  XGBoostParams params_;
  std::string target_;
  std::int64_t training_samples_ = 0;
  TrainingStats last_;
  void* booster_ = nullptr; ///< BoosterHandle; opaque so that users need no XGBoost headers
  std::vector<char> prior_; ///< the prior's trees (XGBoost's UBJSON), or empty
  std::int64_t prior_samples_ = 0;
};

} // namespace kiln::model

#endif
