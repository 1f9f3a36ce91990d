// How well a cost model ranks programs: the figures reported when a model is
// evaluated against measured labels (docs/features.md).
#ifndef KILN_MODEL_METRICS_H
#define KILN_MODEL_METRICS_H

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kiln::model {

/// One program: its task, the model's score and its true label (normalised
/// throughput, higher is faster).
struct Scored {
  std::string task;
  double score = 0;
  double label = 0;
};

/// The fraction of pairs of programs of the same task that the score orders
/// as the label does. Pairs with equal labels are left out; a pair with equal
/// scores (and different labels) counts as half right, so a constant model
/// scores 0.5. Returns 0.5 when there is no pair to judge.
///
/// Pairs are pooled over tasks, so a task of 110 programs (5995 pairs)
/// weighs 8 times one of 40 (780 pairs). `min_gap` > 0 also leaves out the
/// pairs whose labels differ by no more than that fraction of the larger
/// (e.g. 0.05: within measurement noise, where no model can be right).
double pairwise_accuracy(const std::vector<Scored>& programs, double min_gap = 0);

/// pairwise_accuracy, or nothing when there is no pair to judge (a round's
/// record says "not scored" rather than a made-up 0.5).
std::optional<double> judged_pairwise_accuracy(const std::vector<Scored>& programs,
                                               double min_gap = 0);

/// pairwise_accuracy of each task alone (task name order), and their mean:
/// every task weighs the same whatever its number of programs.
struct PerTaskPairwise {
  double mean = 0.5;
  std::vector<std::pair<std::string, double>> per_task;
};
PerTaskPairwise pairwise_accuracy_per_task(const std::vector<Scored>& programs, double min_gap = 0);

struct TopKScore {
  double mean = 0; ///< over the tasks that have a positive best label
  std::vector<std::pair<std::string, double>> per_task; ///< in task name order
};

/// Per task: the best true label among the model's k highest-scored programs
/// divided by the best true label of the task (1: the model's short list
/// holds the best program). Score ties keep input order. Tasks whose best
/// label is not positive (every program failed) are left out.
TopKScore top_k_score(const std::vector<Scored>& programs, int k);

} // namespace kiln::model

#endif
