#include "kiln/model/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace kiln::model {

/// Indices of the programs of each task, tasks in name order.
static std::map<std::string, std::vector<size_t>> by_task(const std::vector<Scored>& programs) {
  std::map<std::string, std::vector<size_t>> tasks;
  for (size_t i = 0; i < programs.size(); ++i)
    tasks[programs[i].task].push_back(i);
  return tasks;
}

/// Right and judged pairs among the programs `idx` of one task.
static std::pair<double, double> judge(const std::vector<Scored>& programs,
                                       const std::vector<size_t>& idx, double min_gap) {
  double right = 0, pairs = 0;
  for (size_t a = 0; a < idx.size(); ++a) {
    const Scored& x = programs[idx[a]];
    for (size_t b = a + 1; b < idx.size(); ++b) {
      const Scored& y = programs[idx[b]];
      if (x.label == y.label ||
          std::abs(x.label - y.label) <= min_gap * std::max(std::abs(x.label), std::abs(y.label)))
        continue;
      pairs += 1;
      if (x.score == y.score)
        right += 0.5;
      else if ((x.score < y.score) == (x.label < y.label))
        right += 1;
    }
  }
  return {right, pairs};
}

std::optional<double> judged_pairwise_accuracy(const std::vector<Scored>& programs,
                                               double min_gap) {
  double right = 0, pairs = 0;
  for (const auto& [task, idx] : by_task(programs)) {
    auto [r, p] = judge(programs, idx, min_gap);
    right += r;
    pairs += p;
  }
  if (pairs == 0)
    return std::nullopt;
  return right / pairs;
}

double pairwise_accuracy(const std::vector<Scored>& programs, double min_gap) {
  return judged_pairwise_accuracy(programs, min_gap).value_or(0.5);
}

PerTaskPairwise pairwise_accuracy_per_task(const std::vector<Scored>& programs, double min_gap) {
  PerTaskPairwise out;
  double sum = 0;
  for (const auto& [task, idx] : by_task(programs)) {
    auto [r, p] = judge(programs, idx, min_gap);
    out.per_task.emplace_back(task, p == 0 ? 0.5 : r / p);
    sum += out.per_task.back().second;
  }
  if (!out.per_task.empty())
    out.mean = sum / static_cast<double>(out.per_task.size());
  return out;
}

TopKScore top_k_score(const std::vector<Scored>& programs, int k) {
  TopKScore out;
  for (auto& [task, idx] : by_task(programs)) {
    double best = -std::numeric_limits<double>::infinity();
    for (size_t i : idx)
      best = std::max(best, programs[i].label);
    if (!(best > 0))
      continue;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return programs[a].score > programs[b].score; });
    double picked = 0;
    const size_t n = std::min(idx.size(), static_cast<size_t>(std::max(k, 0)));
    for (size_t i = 0; i < n; ++i)
      picked = std::max(picked, programs[idx[i]].label);
    out.per_task.emplace_back(task, picked / best);
  }
  if (!out.per_task.empty())
    out.mean = std::accumulate(out.per_task.begin(), out.per_task.end(), 0.0,
                               [](double s, const auto& p) { return s + p.second; }) /
               static_cast<double>(out.per_task.size());
  return out;
}

} // namespace kiln::model
