// Shared by the model tests: programs drawn from the sketch space of a
// matmul, lowered, with a synthetic label that is a known function of the
// config. The model never sees the space; only these tests do.
#ifndef KILN_TEST_UNIT_MODEL_MODEL_TEST_UTIL_H
#define KILN_TEST_UNIT_MODEL_MODEL_TEST_UTIL_H

#include "../ir/test_dags.h"

#include "kiln/model/cost_model.h"
#include "kiln/model/features.h"
#include "kiln/schedule/lower.h"
#include "kiln/space/sketch.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace kiln::test {

/// How the model's callers lower: unrolled loops stay annotated loops.
/// The machine the tests' features describe: fixed, whatever the host.
inline model::Hardware test_hardware() {
  return model::hardware_of(Target{"x86_64-pc-linux-gnu", "znver4", "", 512, 2});
}

inline schedule::LoweredFunc lower_for_features(const schedule::State& state) {
  return schedule::lower(state, schedule::LowerOptions{.expand_unrolled = false});
}

/// The value of a column, decompressed from log2(1 + x).
inline double column(const std::vector<float>& row, const std::string& name) {
  const auto& names = model::feature_names();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    return -1;
  return std::exp2(static_cast<double>(row[static_cast<size_t>(it - names.begin())])) - 1;
}

/// A stand-in for measured throughput that a model can only learn from what
/// the loop nest shows: vectors up to the 16 lanes of the host pay, longer
/// vector loops do not; register tiles of up to 8 rows pay; auto-unroll
/// helps a little; parallel outer loops help.
inline double synthetic_throughput(const space::SketchSpace& sp, const space::SketchConfig& c) {
  const space::Sketch& sk = sp.sketches()[static_cast<size_t>(c.sketch)];
  double vec = 1, rows = 1;
  for (size_t t = 0; t < sk.axes().size(); ++t) {
    const space::TileAxis& ax = sk.axes()[t];
    if (ax.reduce)
      continue;
    const double inner = static_cast<double>(c.tiles[t].back());
    if (ax.axis == "j")
      vec = inner <= 16 ? inner : 16 / std::log2(inner / 8);
    else if (ax.axis == "i")
      rows = std::min(inner, 8.0);
  }
  const double unroll = c.unroll.empty() || c.unroll[0] == 0 ? 1.0 : 1.3;
  const double par = !c.parallel.empty() && c.parallel[0] > 0 ? 1.5 : 1.0;
  return vec * std::sqrt(rows) * unroll * par;
}

struct SyntheticSet {
  std::vector<model::Sample> samples;
  std::vector<space::SketchConfig> configs;
};

/// `n` distinct configs of an M×N×K matmul with labels normalised to the
/// best of the set, as measured labels are.
inline SyntheticSet synthetic_set(std::int64_t M, std::int64_t N, std::int64_t K, int n,
                                  std::uint64_t seed) {
  space::SketchSpace sp(matmul_dag(M, N, K), space::SpaceParams{16, 2, 64});
  std::mt19937_64 rng(seed);
  SyntheticSet set;
  std::vector<double> raw;
  const std::string task =
      "matmul_" + std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  for (int tries = 0; static_cast<int>(set.configs.size()) < n && tries < 50 * n; ++tries) {
    space::SketchConfig c = sp.sample(rng);
    if (std::find(set.configs.begin(), set.configs.end(), c) != set.configs.end())
      continue;
    auto state = schedule::State::replay(sp.dag(), sp.steps(c));
    if (!state)
      continue;
    model::Sample s;
    s.features = model::extract_features(lower_for_features(*state), test_hardware());
    s.task = task;
    set.samples.push_back(std::move(s));
    set.configs.push_back(c);
    raw.push_back(synthetic_throughput(sp, c));
  }
  const double best = *std::max_element(raw.begin(), raw.end());
  for (size_t i = 0; i < raw.size(); ++i)
    set.samples[i].label = raw[i] / best;
  return set;
}

} // namespace kiln::test

#endif
