#include "stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace kiln::report {

std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> r(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]])
      ++j;
    double average = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k)
      r[order[k]] = average;
    i = j + 1;
  }
  return r;
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (a.size() != b.size() || a.size() < 2)
    return nan;
  std::vector<double> ra = ranks(a), rb = ranks(b);
  double n = static_cast<double>(a.size());
  double mean = (n + 1) / 2; // the mean of ranks 1..n, ties included
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    double da = ra[i] - mean, db = rb[i] - mean;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  if (saa == 0 || sbb == 0)
    return nan;
  return sab / std::sqrt(saa * sbb);
}

std::vector<std::size_t> spread(std::size_t n, std::size_t k) {
  std::vector<std::size_t> out;
  if (n <= k) {
    out.resize(n);
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  if (k == 0)
    return out;
  if (k == 1)
    return {n - 1};
  out.reserve(k);
  // i * (n - 1) / (k - 1): strictly increasing because n > k, first 0, last n - 1.
  for (std::size_t i = 0; i < k; ++i)
    out.push_back(i * (n - 1) / (k - 1)); // no overflow below ~4e9 points each
  return out;
}

double unit_hash(std::uint64_t i) {
  // splitmix64's finaliser
  std::uint64_t z = i + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

} // namespace kiln::report
