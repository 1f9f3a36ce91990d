// How well a cost model ranks the programs of each task, against measured
// labels: the figures `kiln train --holdout` and `kiln evaluate` report
// (docs/features.md).
#ifndef KILN_MODEL_EVALUATION_H
#define KILN_MODEL_EVALUATION_H

#include "kiln/model/cost_model.h"

#include <string>
#include <utility>
#include <vector>

namespace kiln::model {

struct Evaluation {
  /// Labels closer than this (relative) are near-ties for `pairwise_gap`:
  /// the same program measured again differs by about 2%, and its repeats
  /// by 1-13% per task on a busy machine.
  static constexpr double kNoiseGap = 0.05;
  double pairwise = -1;               ///< pairwise ranking accuracy within tasks, pairs pooled
  double pairwise_gap = -1;           ///< the same without near-ties
  double pairwise_task_mean = -1;     ///< per-task accuracy averaged over tasks
  double pairwise_task_mean_gap = -1; ///< the same without near-ties
  double top1 = 0, top5 = 0; ///< mean over tasks of (true best of the top-k picks / true best)
  int programs = 0, tasks = 0;
  std::vector<std::pair<std::string, double>> top1_per_task;
  /// Pairwise accuracy of each task, without near-ties (task name order).
  std::vector<std::pair<std::string, double>> pairwise_per_task;
};

Evaluation evaluate(CostModel& model, const std::vector<Sample>& samples);

} // namespace kiln::model

#endif // KILN_MODEL_EVALUATION_H
