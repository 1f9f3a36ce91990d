#include "training_objectives.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string_view>

namespace kiln::model::detail {

ProgramPairs rank_pairs(const std::vector<const std::string*>& tasks,
                        const std::vector<double>& labels, double gap, int per_program,
                        std::uint64_t seed) {
  std::map<std::string_view, std::vector<std::size_t>> by_task;
  for (std::size_t p = 0; p < tasks.size(); ++p)
    by_task[*tasks[p]].push_back(p);
  ProgramPairs pairs;
  auto add = [&](std::size_t hi, std::size_t lo) {
    if (labels[hi] < labels[lo])
      std::swap(hi, lo);
    if (labels[hi] - labels[lo] <= gap * labels[hi] || labels[hi] == labels[lo])
      return;
    pairs.emplace_back(hi, lo);
  };
  std::mt19937_64 rng(seed);
  for (const auto& [task, idx] : by_task) {
    const std::size_t n = idx.size(), k = static_cast<std::size_t>(std::max(per_program, 0));
    if (k == 0 || n * (n - 1) / 2 <= n * k) {
      for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = a + 1; b < n; ++b)
          add(idx[a], idx[b]);
      continue;
    }
    std::uniform_int_distribution<std::size_t> other(0, n - 2);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t i = 0; i < k; ++i) {
        std::size_t b = other(rng);
        add(idx[a], idx[b >= a ? b + 1 : b]);
      }
  }
  return pairs;
}

ProgramGradients pack_sum_gradients(const std::vector<double>& sums,
                                    const std::vector<double>& labels,
                                    const std::vector<double>& weights) {
  ProgramGradients g;
  g.grad.resize(sums.size());
  g.hess.resize(sums.size());
  double weight_sum = 0;
  for (std::size_t p = 0; p < sums.size(); ++p) {
    const double r = sums[p] - labels[p];
    g.grad[p] = weights[p] * r;
    g.hess[p] = weights[p];
    g.loss += weights[p] * r * r;
    weight_sum += weights[p];
  }
  g.loss = weight_sum > 0 ? std::sqrt(g.loss / weight_sum) : 0;
  return g;
}

ProgramGradients rank_gradients(const std::vector<double>& sums, const ProgramPairs& pairs) {
  ProgramGradients g;
  g.grad.assign(sums.size(), 0.0);
  g.hess.assign(sums.size(), 0.0);
  std::vector<double> pairs_of(sums.size(), 0.0);
  for (const auto& [hi, lo] : pairs) {
    const double d = sums[hi] - sums[lo];
    // σ(−d): the probability the pair is ordered wrong; computed stably.
    const double wrong = d >= 0 ? std::exp(-d) / (1 + std::exp(-d)) : 1 / (1 + std::exp(d));
    g.loss += d >= 0 ? std::log1p(std::exp(-d)) : -d + std::log1p(std::exp(d));
    const double h = wrong * (1 - wrong);
    g.grad[hi] -= wrong;
    g.grad[lo] += wrong;
    g.hess[hi] += h;
    g.hess[lo] += h;
    pairs_of[hi] += 1;
    pairs_of[lo] += 1;
  }
  for (std::size_t p = 0; p < sums.size(); ++p) {
    if (pairs_of[p] > 0) {
      g.grad[p] /= pairs_of[p];
      // A floor keeps the Newton step finite once a program's pairs are all
      // confidently right.
      g.hess[p] = std::max(g.hess[p] / pairs_of[p], 1e-6);
    } else {
      g.hess[p] = 1e-6;
    }
  }
  g.loss = pairs.empty() ? 0 : g.loss / static_cast<double>(pairs.size());
  return g;
}

} // namespace kiln::model::detail
