#include "kiln/model/xgboost_model.h"

#include "training_objectives.h"

#include "kiln/support/json_number.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <xgboost/c_api.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

namespace kiln::model {

namespace {

using detail::pack_sum_gradients;
using detail::ProgramGradients;
using detail::ProgramPairs;
using detail::rank_gradients;
using detail::rank_pairs;

constexpr const char* kFileFormat = "kiln-cost-model";
constexpr int kFileVersion = 1;

/// Turns a failed XGBoost call into an Error; XGBoost reports failures by
/// return code with the reason in a thread-local string.
void check(int rc, const char* call) {
  if (rc != 0)
    throw UserError(
        Error("xgboost-failed", fmt::format("XGBoost {} failed: {}", call, XGBGetLastError())));
}

/// Owns a DMatrixHandle.
class DMatrix {
public:
  DMatrix(const std::vector<float>& data, std::size_t rows, std::size_t cols) {
    check(XGDMatrixCreateFromMat(data.data(), rows, cols, std::numeric_limits<float>::quiet_NaN(),
                                 &handle_),
          "DMatrix creation");
  }
  ~DMatrix() {
    if (handle_)
      XGDMatrixFree(handle_);
  }
  DMatrix(const DMatrix&) = delete;
  DMatrix& operator=(const DMatrix&) = delete;
  DMatrixHandle get() const { return handle_; }

private:
  DMatrixHandle handle_ = nullptr;
};

/// XGBoost 1.7's learner destructor erases the learner from a thread_local
/// map. A thread's thread_local objects die before the static ones at exit,
/// so freeing a booster held by a static model would touch a dead map and
/// crash: this flag, set when the thread's thread_locals are destroyed, makes
/// such a late destructor leak the booster instead.
thread_local bool thread_exiting = false;
struct ExitSentinel {
  bool armed = false;
  ~ExitSentinel() { thread_exiting = true; }
};
thread_local ExitSentinel exit_sentinel;

/// Constructs this thread's sentinel (thread_locals are built on first use);
/// called before any XGBoost call that may create its thread_local state.
void arm_exit_sentinel() {
  exit_sentinel.armed = true;
}

void free_booster(void*& booster) {
  if (booster && !thread_exiting)
    XGBoosterFree(static_cast<BoosterHandle>(booster));
  booster = nullptr;
}

void set_param(BoosterHandle b, const char* name, const std::string& value) {
  check(XGBoosterSetParam(b, name, value.c_str()), "SetParam");
}

/// Parameters a booster needs again after loading: the saved model holds the
/// trees and base_score, not the training or threading settings.
void apply_params(BoosterHandle b, const XGBoostParams& p) {
  set_param(b, "verbosity", "0");
  set_param(b, "nthread", std::to_string(p.nthread));
  set_param(b, "max_depth", std::to_string(p.max_depth));
  set_param(b, "eta", fmt::format("{}", p.eta));
  set_param(b, "min_child_weight", fmt::format("{}", p.min_child_weight));
  set_param(b, "gamma", fmt::format("{}", p.gamma));
  set_param(b, "lambda", fmt::format("{}", p.lambda));
  set_param(b, "tree_method", p.tree_method);
  set_param(b, "max_bin", std::to_string(p.max_bin));
  set_param(b, "seed", std::to_string(p.seed));
  set_param(b, "subsample", fmt::format("{}", p.subsample));
  set_param(b, "colsample_bytree", fmt::format("{}", p.colsample));
  // Custom objective: the margin is the prediction; rows start from 0 so that
  // a program's sum does not grow with its row count.
  set_param(b, "objective", "reg:squarederror");
  set_param(b, "base_score", "0");
  set_param(b, "disable_default_eval_metric", "1");
}

/// The rows of all programs as one row-major matrix, and which program each
/// row belongs to.
struct Matrix {
  std::vector<float> data;
  std::vector<std::size_t> program; ///< per row
  std::size_t rows = 0;
};

Matrix gather(const std::vector<const ProgramFeatures*>& programs) {
  const std::size_t cols = static_cast<std::size_t>(feature_count());
  Matrix m;
  std::size_t total = 0;
  for (const ProgramFeatures* p : programs)
    total += p->rows.size();
  m.data.reserve(total * cols);
  m.program.reserve(total);
  for (std::size_t i = 0; i < programs.size(); ++i) {
    for (const std::vector<float>& row : programs[i]->rows) {
      if (row.size() != cols)
        throw UserError(Error("model-feature-count",
                              fmt::format("a feature row has {} columns, this kiln extracts {}: "
                                          "features from another kiln version cannot be mixed; "
                                          "extract them again",
                                          row.size(), cols)));
      m.data.insert(m.data.end(), row.begin(), row.end());
      m.program.push_back(i);
    }
  }
  m.rows = m.program.size();
  return m;
}

/// XGBoost's answer must have one value per row before it is indexed.
void check_shape(const bst_ulong* shape, bst_ulong dim, const Matrix& m, const char* call) {
  bst_ulong n = dim == 0 ? 0 : 1;
  for (bst_ulong d = 0; d < dim; ++d)
    n *= shape[d];
  if (n != m.rows) {
    const std::string why = fmt::format("returned {} values for {} rows", n, m.rows);
    throw UserError(Error("xgboost-failed", fmt::format("XGBoost {} failed: {}", call, why)));
  }
}

std::vector<double> pack_sums(const Matrix& m, std::size_t programs, const float* preds) {
  std::vector<double> sums(programs, 0.0);
  for (std::size_t r = 0; r < m.rows; ++r)
    sums[m.program[r]] += preds[r];
  return sums;
}

nlohmann::json params_json(const XGBoostParams& p) {
  return {{"max_depth", p.max_depth},
          {"eta", p.eta},
          {"min_child_weight", p.min_child_weight},
          {"gamma", p.gamma},
          {"lambda", p.lambda},
          {"nthread", p.nthread},
          {"tree_method", p.tree_method},
          {"max_bin", p.max_bin},
          {"seed", p.seed},
          {"max_rounds", p.max_rounds},
          {"early_stopping_rounds", p.early_stopping_rounds},
          {"min_improvement", p.min_improvement},
          {"continue_rounds", p.continue_rounds},
          {"min_weight", p.min_weight},
          {"objective", to_string(p.objective)},
          {"pair_gap", p.pair_gap},
          {"max_pairs_per_program", p.max_pairs_per_program},
          {"subsample", p.subsample},
          {"colsample", p.colsample}};
}

XGBoostParams params_from_json(const nlohmann::json& j) {
  XGBoostParams d;
  XGBoostParams p;
  p.max_depth = json_number_or(j, "max_depth", d.max_depth);
  p.eta = json_number_or(j, "eta", d.eta);
  p.min_child_weight = json_number_or(j, "min_child_weight", d.min_child_weight);
  p.gamma = json_number_or(j, "gamma", d.gamma);
  p.lambda = json_number_or(j, "lambda", d.lambda);
  p.nthread = json_number_or(j, "nthread", d.nthread);
  p.tree_method = json_string_or(j, "tree_method", d.tree_method);
  // A file written before max_bin was settable used XGBoost's 256.
  p.max_bin = json_number_or(j, "max_bin", 256);
  p.seed = json_number_or(j, "seed", d.seed);
  p.max_rounds = json_number_or(j, "max_rounds", d.max_rounds);
  p.early_stopping_rounds = json_number_or(j, "early_stopping_rounds", d.early_stopping_rounds);
  p.min_improvement = json_number_or(j, "min_improvement", d.min_improvement);
  p.continue_rounds = json_number_or(j, "continue_rounds", d.continue_rounds);
  p.min_weight = json_number_or(j, "min_weight", d.min_weight);
  // A file written before objectives existed was trained on the pack-sum.
  p.objective = objective_from_string(json_string_or(j, "objective", to_string(Objective::PackSum)))
                    .value_or(d.objective);
  p.pair_gap = json_number_or(j, "pair_gap", d.pair_gap);
  // A file written before pair sampling trained on every pair.
  p.max_pairs_per_program = json_number_or(j, "max_pairs_per_program", 0);
  p.subsample = json_number_or(j, "subsample", d.subsample);
  p.colsample = json_number_or(j, "colsample", d.colsample);
  return p;
}

/// The ranges of the parameters kiln itself uses (XGBoost checks its own
/// when the booster is configured): a file's header must not ask for a
/// billion boosting rounds. The reason, or nothing.
std::optional<std::string> check_file_params(const XGBoostParams& p) {
  constexpr int kMaxRounds = 100000;
  if (p.max_rounds < 1 || p.max_rounds > kMaxRounds)
    return fmt::format("max_rounds {} is not in 1..{}", p.max_rounds, kMaxRounds);
  if (p.continue_rounds < 0 || p.continue_rounds > kMaxRounds)
    return fmt::format("continue_rounds {} is not in 0..{}", p.continue_rounds, kMaxRounds);
  if (p.early_stopping_rounds < 0 || p.early_stopping_rounds > kMaxRounds)
    return fmt::format("early_stopping_rounds {} is not in 0..{}", p.early_stopping_rounds,
                       kMaxRounds);
  if (p.nthread < 0 || p.nthread > 1024)
    return fmt::format("nthread {} is not in 0..1024", p.nthread);
  if (p.max_pairs_per_program < 0)
    return fmt::format("max_pairs_per_program {} is negative", p.max_pairs_per_program);
  if (!(p.min_weight >= 0 && p.pair_gap >= 0 && p.min_improvement >= 0))
    return std::string("min_weight, pair_gap and min_improvement must not be negative");
  return std::nullopt;
}

/// FNV-1a over the model bytes: a damaged file is refused before XGBoost
/// parses it.
std::string checksum(const char* data, std::size_t n) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(data[i]);
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

/// The fraction of (faster, slower) pairs the sums order wrong, a tie half.
double misordered(const std::vector<double>& sums, const ProgramPairs& pairs) {
  double wrong = 0;
  for (const auto& [hi, lo] : pairs)
    wrong += sums[hi] < sums[lo] ? 1 : sums[hi] == sums[lo] ? 0.5 : 0;
  return pairs.empty() ? 0 : wrong / static_cast<double>(pairs.size());
}

/// Marks half of the samples (seeded) as held out from fitting, to measure
/// how many local trees help (XGBoostModel::train with a prior). Half, not
/// less: only pairs of two held-out programs measure anything, a quarter
/// of the pairs of a half.
std::vector<char> hold_out_half(const std::vector<Sample>& samples, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<char> held_out(samples.size());
  for (char& h : held_out)
    h = rng() % 2 == 0;
  return held_out;
}

} // namespace

std::optional<Objective> objective_from_string(const std::string& name) {
  if (name == "pack-sum")
    return Objective::PackSum;
  if (name == "rank")
    return Objective::Rank;
  return std::nullopt;
}

XGBoostParams offline_training_params() {
  XGBoostParams p;
  p.objective = Objective::Rank;
  p.max_depth = 6;
  p.min_child_weight = 2;
  p.subsample = 0.7;
  p.colsample = 0.5;
  p.max_rounds = 150;
  return p;
}

XGBoostParams online_training_params() {
  XGBoostParams p;
  // Retrained from scratch every round, where split finding over 256 bins
  // is most of the time; 32 bins train several times faster to the same
  // held-out accuracy (docs/features.md).
  p.max_bin = 32;
  return p;
}

std::string to_string(Objective objective) {
  return objective == Objective::Rank ? "rank" : "pack-sum";
}

XGBoostModel::XGBoostModel(XGBoostParams params) : params_(std::move(params)) {}

XGBoostModel::~XGBoostModel() {
  free_booster(booster_);
}

XGBoostModel::XGBoostModel(XGBoostModel&& other) noexcept
    : params_(std::move(other.params_)), target_(std::move(other.target_)),
      training_samples_(other.training_samples_), last_(other.last_), booster_(other.booster_),
      prior_(std::move(other.prior_)), prior_samples_(other.prior_samples_) {
  other.booster_ = nullptr;
}

XGBoostModel& XGBoostModel::operator=(XGBoostModel&& other) noexcept {
  if (this != &other) {
    free_booster(booster_);
    params_ = std::move(other.params_);
    target_ = std::move(other.target_);
    training_samples_ = other.training_samples_;
    last_ = other.last_;
    booster_ = other.booster_;
    prior_ = std::move(other.prior_);
    prior_samples_ = other.prior_samples_;
    other.booster_ = nullptr;
  }
  return *this;
}

int XGBoostModel::rounds() const {
  if (!booster_)
    return 0;
  int n = 0;
  check(XGBoosterBoostedRounds(static_cast<BoosterHandle>(booster_), &n), "BoostedRounds");
  return n;
}

std::vector<double> XGBoostModel::predict(std::span<const ProgramFeatures* const> programs) {
  arm_exit_sentinel();
  Matrix m = gather({programs.begin(), programs.end()});
  std::vector<double> scores(programs.size(), 0.0);
  if (booster_ && m.rows > 0) {
    // One in-place call over every row of every program: no DMatrix, and
    // XGBoost's per-call overhead paid once.
    std::string array =
        fmt::format(R"({{"data": [{}, true], "shape": [{}, {}], "typestr": "<f4", "version": 3}})",
                    reinterpret_cast<std::uintptr_t>(m.data.data()), m.rows, feature_count());
    const char* config = R"({"type": 1, "training": false, "iteration_begin": 0, )"
                         R"("iteration_end": 0, "strict_shape": false, "cache_id": 0, )"
                         R"("missing": NaN})";
    const bst_ulong* shape = nullptr;
    bst_ulong dim = 0;
    const float* out = nullptr;
    check(XGBoosterPredictFromDense(static_cast<BoosterHandle>(booster_), array.c_str(), config,
                                    nullptr, &shape, &dim, &out),
          "PredictFromDense");
    check_shape(shape, dim, m, "PredictFromDense");
    scores = pack_sums(m, programs.size(), out);
  }
  for (std::size_t i = 0; i < programs.size(); ++i)
    if (programs[i]->rows.empty())
      scores[i] = -std::numeric_limits<double>::infinity();
  return scores;
}

void XGBoostModel::train(const std::vector<Sample>& samples) {
  if (prior_.empty()) {
    fit(samples, {.from_scratch = true, .max_rounds = params_.max_rounds});
    return;
  }
  // How many trees the local samples can carry is measured, not assumed:
  // boost from the prior on half of the programs and take the round that
  // ranked the other half best. The training loss alone keeps falling (the
  // rank loss always does), so a fixed number of local trees fitted a few
  // hundred samples' noise and ranked the rest of the new machine's
  // programs worse than the prior alone. Few or noisy samples add no tree;
  // more samples add more.
  const std::vector<char> held_out = hold_out_half(samples, params_.seed);
  restore_prior();
  const int rounds =
      fit(samples,
          {.from_scratch = false, .max_rounds = params_.continue_rounds, .held_out = &held_out});
  restore_prior();
  fit(samples, {.from_scratch = false, .max_rounds = rounds, .stop_early = false});
}

/// A fresh copy of the prior's trees, with the model's settings.
void XGBoostModel::restore_prior() {
  arm_exit_sentinel();
  BoosterHandle b = nullptr;
  check(XGBoosterCreate(nullptr, 0, &b), "BoosterCreate");
  try {
    check(XGBoosterLoadModelFromBuffer(b, prior_.data(), prior_.size()), "LoadModelFromBuffer");
    apply_params(b, params_);
  } catch (...) {
    XGBoosterFree(b);
    throw;
  }
  free_booster(booster_);
  booster_ = b;
  training_samples_ = prior_samples_;
}

void XGBoostModel::keep_as_prior() {
  KILN_ASSERT(booster_ != nullptr, "a prior is a trained model");
  bst_ulong len = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(booster_), R"({"format": "ubj"})",
                                   &len, &bytes),
        "SaveModelToBuffer");
  prior_.assign(bytes, bytes + len);
  prior_samples_ = training_samples_;
}

void XGBoostModel::continue_training(const std::vector<Sample>& samples) {
  const bool from_scratch = !booster_;
  fit(samples, {.from_scratch = from_scratch,
                .max_rounds = from_scratch ? params_.max_rounds : params_.continue_rounds});
}

int XGBoostModel::fit(const std::vector<Sample>& samples, const FitRun& run) {
  const bool from_scratch = run.from_scratch;
  std::vector<const ProgramFeatures*> ptrs;
  std::vector<double> labels, weights;
  std::vector<const std::string*> tasks;
  std::vector<char> held_out;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const Sample& s = samples[i];
    if (s.features.rows.empty())
      continue;
    held_out.push_back(run.held_out ? (*run.held_out)[i] : 0);
    ptrs.push_back(&s.features);
    tasks.push_back(&s.task);
    labels.push_back(s.label);
    weights.push_back(std::max(s.label, params_.min_weight));
  }
  arm_exit_sentinel();
  last_ = TrainingStats{};
  if (from_scratch) {
    free_booster(booster_);
    training_samples_ = 0;
  }
  if (ptrs.empty())
    return 0;
  Matrix m = gather(ptrs);
  const std::size_t programs = ptrs.size();
  std::vector<double> rows_of(programs, 0.0);
  for (std::size_t p : m.program)
    rows_of[p] += 1;

  DMatrix dtrain(m.data, m.rows, static_cast<std::size_t>(feature_count()));
  // Build into a local handle: the model keeps its old trees if anything
  // below throws.
  BoosterHandle b = nullptr;
  if (from_scratch) {
    DMatrixHandle cache[] = {dtrain.get()};
    check(XGBoosterCreate(cache, 1, &b), "BoosterCreate");
    booster_ = b;
  } else {
    b = static_cast<BoosterHandle>(booster_);
  }
  const int start = rounds();
  try {
    if (from_scratch)
      apply_params(b, params_);
    // Held-out programs get no gradient. With any, the best round is the
    // one that orders most pairs of two held-out programs (the search uses
    // the order, whatever the objective; a pair with a fitted program in it
    // would reward memorizing that program's label). Every round runs, and
    // the best counts only if it orders those pairs better than the trees
    // it started from by more than the accuracy's standard error: a lucky
    // tree on noise must not pass.
    const bool validating = run.held_out != nullptr;
    const bool rank = params_.objective == Objective::Rank;
    std::vector<double> fit_weights = weights;
    for (std::size_t p = 0; p < programs; ++p)
      if (held_out[p])
        fit_weights[p] = 0;
    ProgramPairs fit_pairs, check_pairs;
    if (rank || validating)
      for (const auto& pair :
           rank_pairs(tasks, labels, params_.pair_gap, params_.max_pairs_per_program, params_.seed))
        if (held_out[pair.first] == held_out[pair.second])
          (held_out[pair.first] ? check_pairs : fit_pairs).push_back(pair);
    const double margin =
        validating && !check_pairs.empty() ? 0.5 / std::sqrt(double(check_pairs.size())) : 0.0;

    std::vector<float> grad(m.rows), hess(m.rows);
    double best_loss = std::numeric_limits<double>::infinity(), prior_loss = 0;
    int best_round = 0, round = 0;
    const char* config = R"({"type": 1, "training": true, "iteration_begin": 0, )"
                         R"("iteration_end": 0, "strict_shape": false})";
    for (;; ++round) {
      const bst_ulong* shape = nullptr;
      bst_ulong dim = 0;
      const float* preds = nullptr;
      check(XGBoosterPredictFromDMatrix(b, dtrain.get(), config, &shape, &dim, &preds),
            "PredictFromDMatrix");
      check_shape(shape, dim, m, "PredictFromDMatrix");
      std::vector<double> sums = pack_sums(m, programs, preds);
      const ProgramGradients pg =
          rank ? rank_gradients(sums, fit_pairs) : pack_sum_gradients(sums, labels, fit_weights);
      const double loss = validating ? misordered(sums, check_pairs) : pg.loss;
      if (round == 0)
        prior_loss = loss;
      const bool better = validating ? loss < best_loss && loss <= prior_loss - margin
                                     : loss < best_loss * (1 - params_.min_improvement);
      if (better || round == 0) {
        best_loss = loss;
        best_round = round;
      }
      if (round >= run.max_rounds || loss == 0 ||
          (run.stop_early && !validating && round - best_round >= params_.early_stopping_rounds))
        break;
      // Each row gets its share of the program's gradient and the program's
      // full hessian: when all rows of a program land in one leaf, the
      // Newton step moves their sum by exactly −grad/hess (for the pack-sum:
      // −(sum − y)), and a program counts the same however many rows it has.
      for (std::size_t r = 0; r < m.rows; ++r) {
        const std::size_t p = m.program[r];
        grad[r] = static_cast<float>(pg.grad[p] / rows_of[p]);
        hess[r] = static_cast<float>(pg.hess[p]);
      }
      check(XGBoosterBoostOneIter(b, dtrain.get(), grad.data(), hess.data(), m.rows),
            "BoostOneIter");
    }
    if (!run.stop_early)
      best_round = round;
    // Keep the trees up to the best round (a slice to 0 rounds would mean
    // "all" to XGBoost; a first tree that made things worse is kept).
    if (best_round < round && start + best_round > 0) {
      BoosterHandle sliced = nullptr;
      check(XGBoosterSlice(b, 0, start + best_round, 1, &sliced), "Slice");
      booster_ = sliced;
      XGBoosterFree(b);
      apply_params(sliced, params_);
    }
    last_.programs = static_cast<int>(programs);
    last_.rows = static_cast<int>(m.rows);
    last_.rounds = best_round;
    last_.rounds_run = round;
    last_.loss = best_loss;
    training_samples_ += static_cast<std::int64_t>(programs);
    return best_round;
  } catch (...) {
    if (from_scratch)
      free_booster(booster_);
    throw;
  }
}

std::optional<Error> XGBoostModel::save(const std::string& path) const {
  if (!booster_)
    return Error("model-untrained",
                 fmt::format("cannot save the cost model to '{}': it has not been trained", path));
  auto written = catch_user_error([&]() -> Expected<bool> {
    bst_ulong len = 0;
    const char* bytes = nullptr;
    check(XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(booster_), R"({"format": "ubj"})",
                                     &len, &bytes),
          "SaveModelToBuffer");
    nlohmann::json header = {{"format", kFileFormat},
                             {"version", kFileVersion},
                             {"feature_version", kFeatureVersion},
                             {"feature_count", feature_count()},
                             {"target", target_},
                             {"training_samples", training_samples_},
                             {"rounds", rounds()},
                             {"params", params_json(params_)},
                             {"model_format", "ubj"},
                             {"model_bytes", len},
                             {"model_fnv1a64", checksum(bytes, len)}};
    // Write, then rename: a crash never leaves half a model under the name.
    const std::string tmp = path + ".tmp";
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) {
      out << header.dump() << '\n';
      out.write(bytes, static_cast<std::streamsize>(len));
      out.close();
    }
    if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
      std::string why = std::strerror(errno);
      std::remove(tmp.c_str());
      return Error("model-write-failed",
                   fmt::format("cannot write the cost model '{}': {}", path, why));
    }
    return true;
  });
  if (written)
    return std::nullopt;
  return written.error();
}

static Error corrupt(const std::string& path, const std::string& why) {
  return Error("model-corrupt",
               fmt::format("the cost model '{}' is damaged ({}); train a new one", path, why));
}

Expected<XGBoostModel> XGBoostModel::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error("model-unreadable",
                 fmt::format("cannot read the cost model '{}': {}", path, std::strerror(errno)));
  std::string line;
  if (!std::getline(in, line))
    return corrupt(path, "no header line");
  std::ostringstream rest;
  rest << in.rdbuf();
  const std::string bytes = rest.str();

  nlohmann::json header = nlohmann::json::parse(line, nullptr, false);
  if (header.is_discarded() || !json_string_equals(header, "format", kFileFormat))
    return corrupt(path, "its first line is not a kiln cost model header");
  XGBoostModel model;
  std::uint64_t expected_bytes = 0;
  std::string expected_sum;
  try {
    const int version = json_number<int>(header.at("feature_version"), "feature_version");
    const int count = json_number_or(header, "feature_count", feature_count());
    if (version != kFeatureVersion || count != feature_count())
      return Error("model-feature-version",
                   fmt::format("the cost model '{}' was trained on features of version {} ({} "
                               "columns); this kiln extracts version {} ({} columns): retrain the "
                               "model on the tuning logs",
                               path, version, count, kFeatureVersion, feature_count()));
    const int file_version = json_number_or(header, "version", 0);
    if (file_version > kFileVersion)
      return corrupt(path, fmt::format("file version {} is newer than this kiln reads ({})",
                                       file_version, kFileVersion));
    model.params_ = params_from_json(header.value("params", nlohmann::json::object()));
    model.target_ = json_string_or(header, "target", "");
    model.training_samples_ = json_number_or(header, "training_samples", std::int64_t{0});
    expected_bytes = json_number<std::uint64_t>(header.at("model_bytes"), "model_bytes");
    expected_sum = json_string_or(header, "model_fnv1a64", "");
  } catch (const nlohmann::json::exception& e) {
    return corrupt(path, fmt::format("bad header: {}", e.what()));
  } catch (const std::out_of_range& e) {
    return corrupt(path, fmt::format("bad header: {}", e.what()));
  }
  if (bytes.size() != expected_bytes)
    return corrupt(
        path, fmt::format("{} model bytes where the header says {}", bytes.size(), expected_bytes));
  // XGBoost's loader aborts or hangs on some damaged bodies: only bytes
  // that match the checksum written with them reach it.
  if (expected_sum.empty())
    return corrupt(path, "its header has no model_fnv1a64 checksum; write the model again with "
                         "`kiln train`");
  if (checksum(bytes.data(), bytes.size()) != expected_sum)
    return corrupt(path, "the model bytes do not match their checksum");
  // A checksum proves the bytes unchanged, not well formed (anyone can
  // write a matching one): XGBoost's UBJSON reader trusts the lengths it
  // reads and aborts on absurd ones, so the document is parsed first by a
  // reader that checks them against the bytes there are.
  if (nlohmann::json::from_ubjson(bytes, true, false).is_discarded() &&
      nlohmann::json::parse(bytes, nullptr, false).is_discarded())
    return corrupt(path, "the model bytes are not a UBJSON or JSON document");

  arm_exit_sentinel();
  BoosterHandle b = nullptr;
  if (XGBoosterCreate(nullptr, 0, &b) != 0)
    return Error("xgboost-failed",
                 fmt::format("XGBoost BoosterCreate failed: {}", XGBGetLastError()));
  model.booster_ = b;
  if (XGBoosterLoadModelFromBuffer(b, bytes.data(), bytes.size()) != 0)
    return corrupt(path, fmt::format("XGBoost cannot load it: {}", XGBGetLastError()));
  if (auto err = check_file_params(model.params_))
    return corrupt(path, fmt::format("bad parameters in its header: {}", *err));
  auto configured = catch_user_error([&]() -> Expected<bool> {
    apply_params(b, model.params_);
    return true;
  });
  if (!configured)
    return configured.error();
  // XGBoost checks its parameters when the booster is first configured,
  // which a prediction does: a file's values out of XGBoost's range are a
  // bad file here, not a failure at the first prediction of a tuning run.
  ProgramFeatures probe;
  probe.rows.emplace_back(static_cast<std::size_t>(feature_count()), 0.0f);
  const ProgramFeatures* one[] = {&probe};
  auto predicted = catch_user_error([&]() -> Expected<bool> {
    (void)model.predict(std::span<const ProgramFeatures* const>(one));
    int rounds = 0;
    check(XGBoosterBoostedRounds(b, &rounds), "BoostedRounds");
    return true;
  });
  if (!predicted)
    return corrupt(path,
                   fmt::format("bad parameters in its header: {}", predicted.error().message()));
  return model;
}

} // namespace kiln::model
