#include "kiln/schedule/refit.h"

#include "kiln/schedule/state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::schedule {

static std::int64_t product(const std::vector<std::int64_t>& factors) {
  return std::accumulate(factors.begin(), factors.end(), std::int64_t{1},
                         std::multiplies<std::int64_t>());
}

/// How many elements a tile of `tile` runs over a loop of `extent`,
/// padding included.
static std::int64_t padded(std::int64_t extent, std::int64_t tile) {
  return (extent + tile - 1) / tile * tile;
}

std::vector<std::int64_t> refit_factors(const std::vector<std::int64_t>& factors,
                                        std::int64_t extent) {
  KILN_ASSERT(!factors.empty() && extent >= 1, "a split has factors and a loop to split");
  std::vector<std::int64_t> f = factors;
  for (std::int64_t& x : f)
    x = std::max<std::int64_t>(x, 1);
  // Shrink a tile larger than the loop: halve the largest factor but the
  // innermost, the innermost only when the others are 1.
  while (product(f) > extent) {
    auto outer_end = f.size() > 1 ? f.end() - 1 : f.end();
    auto largest = std::max_element(f.begin(), outer_end);
    if (*largest == 1)
      largest = f.end() - 1;
    *largest = (*largest + 1) / 2;
  }
  const std::int64_t tile = product(f);
  if (padded(extent, tile) * 8 <= extent * 9)
    return f;
  // Too much padding: the outermost factor to the value within a factor of
  // two that pads least, the nearest to the old one on a tie.
  const std::int64_t rest = tile / f[0];
  const std::int64_t old = f[0];
  std::int64_t best = old;
  for (std::int64_t v = std::max<std::int64_t>(1, old / 2); v <= 2 * old; ++v) {
    if (v * rest > extent)
      break;
    const std::int64_t pad = padded(extent, v * rest), best_pad = padded(extent, best * rest);
    const double dist = std::abs(std::log(double(v) / double(old)));
    const double best_dist = std::abs(std::log(double(best) / double(old)));
    if (pad < best_pad || (pad == best_pad && dist < best_dist))
      best = v;
  }
  f[0] = best;
  return f;
}

Expected<std::vector<Step>> refit_steps(const ir::ComputeDAG& dag, const std::vector<Step>& steps) {
  State state(dag);
  for (size_t i = 0; i < steps.size(); ++i) {
    Step step = steps[i];
    auto extent_of = [&](const std::string& stage, const std::string& iter) -> std::int64_t {
      const StageState* st = state.find_stage(stage);
      const Iterator* it = st ? st->find_iter(iter) : nullptr;
      return it ? it->extent : 0;
    };
    if (auto* split = std::get_if<SplitStep>(&step)) {
      const std::int64_t extent = extent_of(split->stage, split->iter);
      if (extent >= 1 && !split->factors.empty())
        split->factors = refit_factors(split->factors, extent);
    } else if (auto* rf = std::get_if<RfactorStep>(&step)) {
      const std::int64_t extent = extent_of(rf->stage, rf->iter);
      if (extent >= 1 && rf->factor >= 1)
        rf->factor = refit_factors({rf->factor}, extent).front();
    }
    if (auto err = state.apply(step))
      return Error(err->id(), fmt::format("step {} ({}): {}", i, step_tag(step), err->message()));
  }
  return state.steps();
}

} // namespace kiln::schedule
