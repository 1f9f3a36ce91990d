// The configs of a sketch space: random draws, mutations, neighbours,
// crossover, and the flat numeric view.
#include "kiln/space/factorization.h"
#include "kiln/space/sketch.h"

#include <algorithm>
#include <random>
#include <set>

namespace kiln::space {

SketchConfig SketchSpace::sample(std::mt19937_64& rng) const {
  return sample(
      static_cast<int>(std::uniform_int_distribution<size_t>(0, sketches_.size() - 1)(rng)), rng);
}

SketchConfig SketchSpace::sample(int sketch, std::mt19937_64& rng) const {
  SketchConfig c;
  c.sketch = sketch;
  const Sketch& sk = sketches_.at(sketch);
  for (const TileAxis& a : sk.axes()) {
    const auto& options = a.candidates();
    c.tiles.push_back(options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)]);
  }
  for (size_t p = 0; p < sk.plans().size(); ++p) {
    int n = sk.max_parallel(static_cast<int>(p));
    // Parallel loops pay off on more than one core; a few outer loops suffice.
    c.parallel.push_back(
        n == 0 || params_.cores <= 1 ? 0 : std::uniform_int_distribution<int>(1, n)(rng));
    // Drawn even when unused: the draws of a seed, and so the programs it
    // samples, must not depend on which knobs a plan uses (datasets resume
    // by program).
    std::int64_t unroll = kUnrollChoices[std::uniform_int_distribution<int>(0, 3)(rng)];
    c.unroll.push_back(sk.uses_unroll(static_cast<int>(p)) ? unroll : 0);
  }
  return c;
}

/// The new factors of level `a` when levels `a` and `b` of a tile share
/// their product anew (any factor pair with the same product; see mutate).
static std::vector<std::int64_t> exchanged_factors(const std::vector<std::int64_t>& f,
                                                   const TileAxis& axis, size_t a, size_t b) {
  // The innermost factor stays within its bounds (a whole number of
  // vectors unless it already was not, as in a config logged by a space
  // without that bound).
  const bool whole = f.back() % axis.innermost_multiple == 0;
  auto fits = [&](size_t level, std::int64_t factor) {
    return level + 1 < f.size() ||
           (factor <= axis.max_innermost && (!whole || factor % axis.innermost_multiple == 0));
  };
  const std::int64_t product = f[a] * f[b];
  // With a tail the outer factor is the outer loop's count, which a new
  // inner product may shorten: such a pair is no longer a tiling.
  auto outer_stays = [&](std::int64_t x) {
    if (a != 0 && b != 0)
      return true;
    std::vector<std::int64_t> g = f;
    g[a] = x;
    g[b] = product / x;
    return is_tiling(axis.extent, g);
  };
  std::vector<std::int64_t> choices;
  auto consider = [&](std::int64_t x) {
    if (x != f[a] && fits(a, x) && fits(b, product / x) && outer_stays(x))
      choices.push_back(x);
  };
  for (std::int64_t x = 1; x * x <= product; ++x)
    if (product % x == 0) {
      consider(x);
      if (x * x != product)
        consider(product / x);
    }
  return choices;
}

/// The tilings among the axis's candidates that differ from `f` in inner
/// level `level` only (and so in the outer count): a tile of 16 becomes one
/// of 48 over 1000, rounding up to another multiple.
static std::vector<std::vector<std::int64_t>> resized(const std::vector<std::int64_t>& f,
                                                      const TileAxis& axis, size_t level) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& g : axis.candidates()) {
    bool same_elsewhere = g[level] != f[level];
    for (size_t i = 1; i < f.size() && same_elsewhere; ++i)
      same_elsewhere = i == level || g[i] == f[i];
    if (same_elsewhere)
      out.push_back(g);
  }
  return out;
}

SketchConfig SketchSpace::mutate(const SketchConfig& config, std::mt19937_64& rng) const {
  SketchConfig c = config;
  const Sketch& sk = sketches_[c.sketch];
  std::uniform_real_distribution<double> coin(0, 1);
  double pick = coin(rng);
  // Tile sizes: two levels of one tile share their product anew, any other
  // factor pair with the same product. Ansor's MutateTileSize moves a
  // divisor of one level to the other, which this includes; exchanging
  // factors as well lets one step turn x 8 into 14 of a 56-long axis (a
  // 7 in, a 4 out), where two moves pass through 56 (112 accumulators, a
  // spilling tile the model rightly scores low) and the search would stay on
  // the 16-accumulator tile it had. Any divisor, not only the smallest prime:
  // a packed panel's k block goes from 16 to 256 in one step.
  if (pick < 0.9 && !c.tiles.empty()) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      size_t t = std::uniform_int_distribution<size_t>(0, c.tiles.size() - 1)(rng);
      auto& f = c.tiles[t];
      if (f.size() < 2 || sk.axes()[t].extent <= 1)
        continue;
      size_t a = std::uniform_int_distribution<size_t>(0, f.size() - 1)(rng);
      size_t b = std::uniform_int_distribution<size_t>(0, f.size() - 2)(rng);
      if (b >= a)
        ++b;
      // On an axis with tails, half the time one inner level takes another
      // size, which moves the tiling to another rounded-up extent (sizes
      // exchanged keep the product, and so the tail).
      if (sk.axes()[t].has_tailed_candidates() && std::bernoulli_distribution(0.5)(rng)) {
        auto options = resized(f, sk.axes()[t], std::max(a, b));
        if (options.empty())
          continue;
        f = options[std::uniform_int_distribution<size_t>(0, options.size() - 1)(rng)];
        return c;
      }
      std::vector<std::int64_t> choices = exchanged_factors(f, sk.axes()[t], a, b);
      if (choices.empty())
        continue;
      const std::int64_t product = f[a] * f[b];
      f[a] = choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
      f[b] = product / f[a];
      return c;
    }
  }
  // Annotations: only the knobs a plan uses (see Sketch::uses_unroll).
  std::vector<int> unrolled, parallel;
  for (size_t p = 0; p < c.unroll.size(); ++p) {
    if (sk.uses_unroll(static_cast<int>(p)))
      unrolled.push_back(static_cast<int>(p));
    if (sk.max_parallel(static_cast<int>(p)) > 0 && params_.cores > 1)
      parallel.push_back(static_cast<int>(p));
  }
  auto any = [&](const std::vector<int>& plans) {
    return plans[std::uniform_int_distribution<size_t>(0, plans.size() - 1)(rng)];
  };
  if (!unrolled.empty() && (pick < 0.95 || parallel.empty())) {
    c.unroll[any(unrolled)] = kUnrollChoices[std::uniform_int_distribution<int>(0, 3)(rng)];
    return c;
  }
  if (!parallel.empty()) {
    int p = any(parallel);
    c.parallel[p] = std::uniform_int_distribution<int>(1, sk.max_parallel(p))(rng);
  }
  return c;
}

std::vector<std::pair<int, SketchConfig>>
SketchSpace::neighbours(const SketchConfig& config) const {
  std::vector<std::pair<int, SketchConfig>> out;
  const Sketch& sk = sketches_.at(config.sketch);
  const int tiles = static_cast<int>(config.tiles.size());
  for (int t = 0; t < tiles; ++t) {
    const auto& f = config.tiles[t];
    if (sk.axes()[t].extent <= 1)
      continue;
    for (size_t a = 0; a < f.size(); ++a)
      for (size_t b = a + 1; b < f.size(); ++b)
        for (std::int64_t x : exchanged_factors(f, sk.axes()[t], a, b)) {
          SketchConfig c = config;
          c.tiles[t][b] = f[a] * f[b] / x;
          c.tiles[t][a] = x;
          out.emplace_back(t, std::move(c));
        }
    if (sk.axes()[t].has_tailed_candidates()) {
      // Resized levels not already reached by an exchange.
      std::set<std::vector<std::int64_t>> reached{f};
      for (auto& [decision, n] : out)
        if (decision == t)
          reached.insert(n.tiles[t]);
      for (size_t level = 1; level < f.size(); ++level)
        for (auto& g : resized(f, sk.axes()[t], level))
          if (reached.insert(g).second) {
            SketchConfig c = config;
            c.tiles[t] = g;
            out.emplace_back(t, std::move(c));
          }
    }
  }
  for (size_t p = 0; p < config.parallel.size(); ++p) {
    const int plan = static_cast<int>(p);
    if (params_.cores > 1)
      for (int n = 1; n <= sk.max_parallel(plan); ++n)
        if (n != config.parallel[p]) {
          SketchConfig c = config;
          c.parallel[p] = n;
          out.emplace_back(tiles + 2 * plan, std::move(c));
        }
    if (sk.uses_unroll(plan))
      for (std::int64_t u : kUnrollChoices)
        if (u != config.unroll[p]) {
          SketchConfig c = config;
          c.unroll[p] = u;
          out.emplace_back(tiles + 2 * plan + 1, std::move(c));
        }
  }
  return out;
}

SketchConfig SketchSpace::crossover(const SketchConfig& a, const SketchConfig& b,
                                    std::mt19937_64& rng) const {
  if (a.sketch != b.sketch)
    return a;
  SketchConfig c = a;
  std::bernoulli_distribution coin(0.5);
  for (size_t t = 0; t < c.tiles.size(); ++t)
    if (coin(rng))
      c.tiles[t] = b.tiles[t];
  for (size_t p = 0; p < c.parallel.size(); ++p)
    if (coin(rng)) {
      c.parallel[p] = b.parallel[p];
      c.unroll[p] = b.unroll[p];
    }
  return c;
}

std::vector<std::int64_t> SketchSpace::flatten(const SketchConfig& c) const {
  std::vector<std::int64_t> flat{c.sketch};
  for (const auto& f : c.tiles)
    flat.insert(flat.end(), f.begin(), f.end());
  for (size_t p = 0; p < c.parallel.size(); ++p) {
    flat.push_back(c.parallel[p]);
    flat.push_back(c.unroll[p]);
  }
  return flat;
}

std::optional<SketchConfig> SketchSpace::unflatten(const std::vector<std::int64_t>& flat) const {
  if (flat.empty() || flat[0] < 0 || flat[0] >= static_cast<std::int64_t>(sketches_.size()))
    return std::nullopt;
  SketchConfig c;
  c.sketch = static_cast<int>(flat[0]);
  const Sketch& sk = sketches_[c.sketch];
  size_t at = 1;
  for (const TileAxis& a : sk.axes()) {
    if (at + a.parts > flat.size())
      return std::nullopt;
    std::vector<std::int64_t> f(flat.begin() + at, flat.begin() + at + a.parts);
    at += a.parts;
    if (!a.admits(f))
      return std::nullopt;
    c.tiles.push_back(f);
  }
  if (at + 2 * sk.plans().size() != flat.size())
    return std::nullopt;
  for (size_t p = 0; p < sk.plans().size(); ++p) {
    c.parallel.push_back(static_cast<int>(flat[at++]));
    c.unroll.push_back(flat[at++]);
  }
  return c;
}

} // namespace kiln::space
