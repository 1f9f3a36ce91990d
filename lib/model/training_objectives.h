#pragma once

// The objectives kiln's boosters are trained on through custom gradients
// (XGBoostModel::fit): Ansor's pack-sum regression and a pairwise rank loss
// within each task (docs/features.md).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::model::detail {

using ProgramPairs = std::vector<std::pair<std::size_t, std::size_t>>;

/// The training pairs of the rank objective: (faster, slower) programs of
/// the same task whose labels differ by more than `gap` of the larger. In a
/// large task each program gets `per_program` random partners instead of
/// all of them (see XGBoostParams::max_pairs_per_program).
ProgramPairs rank_pairs(const std::vector<const std::string*>& tasks,
                        const std::vector<double>& labels, double gap, int per_program,
                        std::uint64_t seed);

/// Per-program gradient and hessian of the objective with respect to the
/// pack-sums, and the loss reported for early stopping.
struct ProgramGradients {
  std::vector<double> grad, hess;
  double loss = 0;
};

/// Ansor's pack-sum regression: w·(s − y)²/2; the loss is the weighted RMSE.
/// A program of weight 0 gets no gradient and adds nothing to the loss.
ProgramGradients pack_sum_gradients(const std::vector<double>& sums,
                                    const std::vector<double>& labels,
                                    const std::vector<double>& weights);

/// Pairwise logistic loss log(1 + exp(−(s_hi − s_lo))) per pair. Every
/// program's gradient and hessian are divided by its number of pairs, so a
/// program weighs the same in a task of 20 programs as in one of 110
/// (otherwise the big tasks would decide every split); a program in no pair
/// gets no gradient. The loss is the mean over pairs.
ProgramGradients rank_gradients(const std::vector<double>& sums, const ProgramPairs& pairs);

} // namespace kiln::model::detail
