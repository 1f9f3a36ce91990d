#include "kiln/space/factorization.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>

namespace kiln::space {

using Tilings = std::vector<std::vector<std::int64_t>>;

static void enumerate(std::int64_t rest, int parts, std::int64_t max_innermost,
                      std::int64_t innermost_multiple, std::vector<std::int64_t>& prefix,
                      Tilings& out) {
  if (parts == 1) {
    if ((rest <= max_innermost || prefix.empty()) && rest % innermost_multiple == 0) {
      prefix.push_back(rest);
      out.push_back(prefix);
      prefix.pop_back();
    }
    return;
  }
  for (std::int64_t f = 1; f <= rest; ++f) {
    if (rest % f != 0)
      continue;
    prefix.push_back(f);
    enumerate(rest / f, parts - 1, max_innermost, innermost_multiple, prefix, out);
    prefix.pop_back();
  }
}

/// The exact factorizations, without the one-loop fallback.
static Tilings exact(std::int64_t extent, int parts, std::int64_t max_innermost,
                     std::int64_t innermost_multiple) {
  Tilings out;
  std::vector<std::int64_t> prefix;
  enumerate(extent, parts, max_innermost, std::max<std::int64_t>(innermost_multiple, 1), prefix,
            out);
  return out;
}

/// Both caches: a list is made once per argument list and never moves.
static std::mutex cache_mutex;

const Tilings& factorizations(std::int64_t extent, int parts, std::int64_t max_innermost,
                              std::int64_t innermost_multiple) {
  using Key = std::tuple<std::int64_t, int, std::int64_t, std::int64_t>;
  static std::map<Key, std::unique_ptr<Tilings>> cache;
  innermost_multiple = std::max<std::int64_t>(innermost_multiple, 1);
  std::lock_guard<std::mutex> lock(cache_mutex);
  auto& slot = cache[{extent, parts, max_innermost, innermost_multiple}];
  if (!slot) {
    slot = std::make_unique<Tilings>(exact(extent, parts, max_innermost, innermost_multiple));
    if (slot->empty()) { // no innermost factor short enough, or a multiple
      std::vector<std::int64_t> whole(parts, 1);
      whole[0] = extent;
      slot->push_back(whole);
    }
  }
  return *slot;
}

static std::int64_t inner_product(const std::vector<std::int64_t>& f) {
  std::int64_t p = 1;
  for (size_t i = 1; i < f.size(); ++i)
    p *= f[i];
  return p;
}

/// The tailed tilings of `extent` (see tilings()), without the exact ones.
static Tilings tailed(std::int64_t extent, int parts, std::int64_t max_innermost,
                      std::int64_t vector_lanes) {
  std::set<std::int64_t> rounded;
  auto consider = [&](std::int64_t m, bool any_waste) {
    if (m <= 1 || extent > (std::int64_t{1} << 40))
      return;
    const std::int64_t up = (extent + m - 1) / m * m;
    if (up != extent && (any_waste || (up - extent) * 8 <= extent))
      rounded.insert(up);
  };
  for (std::int64_t m = 2; m <= 64; m *= 2)
    consider(m, false);
  // Register tiles of 1 to 4 vectors, each a whole tile at least once (no
  // tile longer than the extent in whole vectors). An extent of whole
  // vectors has its exact tilings in whole vectors already.
  const std::int64_t in_vectors = (extent + vector_lanes - 1) / vector_lanes * vector_lanes;
  for (std::int64_t m = vector_lanes;
       vector_lanes > 1 && extent % vector_lanes != 0 && m <= std::min(max_innermost, in_vectors);
       m += vector_lanes)
    consider(m, true);
  Tilings out;
  std::set<std::vector<std::int64_t>> seen;
  for (std::int64_t up : rounded)
    for (std::vector<std::int64_t> f :
         exact(up, parts, max_innermost, vector_lanes > 1 ? vector_lanes : 1)) {
      f[0] = (extent - 1) / inner_product(f) + 1;
      if (seen.insert(f).second)
        out.push_back(std::move(f));
    }
  return out;
}

const Tilings& tilings(std::int64_t extent, int parts, std::int64_t max_innermost,
                       std::int64_t innermost_multiple, std::int64_t vector_lanes) {
  const Tilings& whole = factorizations(extent, parts, max_innermost, innermost_multiple);
  using Key = std::tuple<std::int64_t, int, std::int64_t, std::int64_t, std::int64_t>;
  static std::map<Key, std::unique_ptr<Tilings>> cache;
  innermost_multiple = std::max<std::int64_t>(innermost_multiple, 1);
  std::lock_guard<std::mutex> lock(cache_mutex);
  auto& slot = cache[{extent, parts, max_innermost, innermost_multiple, vector_lanes}];
  if (!slot) {
    // The one-loop fallback of factorizations() only when nothing else
    // qualifies: an innermost factor that must be whole vectors of an
    // extent that is not gets tailed tilings instead.
    Tilings tails = tailed(extent, parts, max_innermost, vector_lanes);
    slot = std::make_unique<Tilings>(
        tails.empty() ? whole : exact(extent, parts, max_innermost, innermost_multiple));
    // An exact tiling that is also a tailed one's outcome (a whole number
    // of vectors when the extent is one) is listed once.
    std::set<std::vector<std::int64_t>> seen(slot->begin(), slot->end());
    for (auto& f : tails)
      if (!seen.count(f))
        slot->push_back(std::move(f));
  }
  return *slot;
}

bool is_tiling(std::int64_t extent, const std::vector<std::int64_t>& factors) {
  if (factors.empty() || extent < 1)
    return false;
  std::int64_t p = 1;
  for (size_t i = 1; i < factors.size(); ++i) {
    if (factors[i] < 1 || __builtin_mul_overflow(p, factors[i], &p))
      return false;
  }
  return factors[0] == (extent - 1) / p + 1;
}

} // namespace kiln::space
