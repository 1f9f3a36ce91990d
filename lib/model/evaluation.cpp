#include "kiln/model/evaluation.h"

#include "kiln/model/metrics.h"

#include <unordered_set>

namespace kiln::model {

Evaluation evaluate(CostModel& model, const std::vector<Sample>& samples) {
  std::vector<ProgramFeatures> programs;
  for (const Sample& s : samples)
    programs.push_back(s.features);
  std::vector<double> scores = model.predict(programs);
  std::vector<Scored> scored;
  std::unordered_set<std::string> tasks;
  for (size_t i = 0; i < samples.size(); ++i) {
    scored.push_back({samples[i].task, scores[i], samples[i].label});
    tasks.insert(samples[i].task);
  }
  Evaluation e;
  e.programs = static_cast<int>(samples.size());
  e.tasks = static_cast<int>(tasks.size());
  e.pairwise = pairwise_accuracy(scored);
  e.pairwise_gap = pairwise_accuracy(scored, Evaluation::kNoiseGap);
  e.pairwise_task_mean = pairwise_accuracy_per_task(scored).mean;
  PerTaskPairwise per_task = pairwise_accuracy_per_task(scored, Evaluation::kNoiseGap);
  e.pairwise_task_mean_gap = per_task.mean;
  e.pairwise_per_task = per_task.per_task;
  TopKScore t1 = top_k_score(scored, 1), t5 = top_k_score(scored, 5);
  e.top1 = t1.mean;
  e.top5 = t5.mean;
  e.top1_per_task = t1.per_task;
  return e;
}

} // namespace kiln::model
