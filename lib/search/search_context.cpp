#include "kiln/search/search_context.h"

#include "kiln/model/program_features.h"

#include <algorithm>
#include <limits>
#include <thread>

namespace kiln::search {

/// Caches are dropped whole when they grow past this many entries: a long
/// run scores millions of points, and most are never seen again.
constexpr std::size_t kMaxCacheEntries = 200000;

std::size_t SearchContext::PointHash::operator()(const Point& p) const {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::int64_t x : p)
    h = (h ^ static_cast<std::uint64_t>(x)) * 0x100000001b3ULL;
  return static_cast<std::size_t>(h);
}

unsigned SearchContext::feature_threads() {
  return std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
}

std::optional<schedule::ProgramKey> SearchContext::key(const Point& p) {
  auto it = key_cache_.find(p);
  if (it != key_cache_.end())
    return it->second;
  if (key_cache_.size() > kMaxCacheEntries)
    key_cache_.clear();
  return key_cache_[p] = space.key(p);
}

bool SearchContext::is_measured(const Point& p) {
  std::optional<schedule::ProgramKey> k = key(p);
  return !k || measured_programs.count(*k) > 0;
}

/// The features of a point's program, from its state.
static model::ProgramFeatures features_of(const SearchSpace& space, const Point& p,
                                          const model::Hardware& hardware) {
  auto state = space.state(p);
  return state ? model::program_features(*state, hardware) : model::ProgramFeatures{};
}

const model::ProgramFeatures& SearchContext::features(const Point& p) {
  static const model::ProgramFeatures kNone;
  std::optional<schedule::ProgramKey> k = key(p);
  if (!k)
    return kNone;
  auto it = feature_cache_.find(*k);
  if (it != feature_cache_.end())
    return it->second;
  if (feature_cache_.size() > kMaxCacheEntries)
    feature_cache_.clear();
  return feature_cache_[*k] = features_of(space, p, hardware);
}

/// The features of `points`, stage by stage: all replayed, then all lowered
/// and read (model::program_features); a point that does not build gets no
/// rows.
static std::vector<model::ProgramFeatures> features_of(const SearchSpace& space,
                                                       std::span<const Point* const> points,
                                                       const model::Hardware& hardware) {
  std::vector<schedule::State> states;
  std::vector<std::size_t> built;
  states.reserve(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    if (auto s = space.state(*points[i])) {
      states.push_back(std::move(*s));
      built.push_back(i);
    }
  std::vector<const schedule::State*> pointers;
  for (const schedule::State& s : states)
    pointers.push_back(&s);
  std::vector<model::ProgramFeatures> features = model::program_features(pointers, hardware);
  std::vector<model::ProgramFeatures> out(points.size());
  for (std::size_t i = 0; i < built.size(); ++i)
    out[built[i]] = std::move(features[i]);
  return out;
}

std::vector<double> SearchContext::predict(const std::vector<Point>& points) {
  if (feature_cache_.size() > kMaxCacheEntries)
    feature_cache_.clear();
  // Lowering for features dominates: fill the cache on two threads.
  std::vector<const Point*> missing;
  std::vector<schedule::ProgramKey> missing_keys;
  ProgramSet seen;
  for (const Point& p : points) {
    std::optional<schedule::ProgramKey> k = key(p);
    if (k && !feature_cache_.count(*k) && seen.insert(*k).second) {
      missing.push_back(&p);
      missing_keys.push_back(*k);
    }
  }
  // Each thread takes chunks of points, which features_of runs stage by
  // stage (faster than one point at a time).
  constexpr std::size_t kChunk = 64;
  std::vector<model::ProgramFeatures> computed(missing.size());
  unsigned threads = feature_threads();
  auto work = [&](unsigned t, unsigned stride) {
    for (std::size_t begin = t * kChunk; begin < missing.size(); begin += stride * kChunk) {
      const std::size_t n = std::min(kChunk, missing.size() - begin);
      std::vector<model::ProgramFeatures> f =
          features_of(space, std::span<const Point* const>(missing.data() + begin, n), hardware);
      std::move(f.begin(), f.end(), computed.begin() + static_cast<std::ptrdiff_t>(begin));
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads && missing.size() > kChunk; ++t)
    pool.emplace_back(work, t, threads);
  work(0, static_cast<unsigned>(pool.size()) + 1);
  for (std::thread& t : pool)
    t.join();
  for (std::size_t i = 0; i < missing.size(); ++i)
    feature_cache_[missing_keys[i]] = std::move(computed[i]);

  // Every buildable point's program is in the cache now.
  std::vector<const model::ProgramFeatures*> batch;
  std::vector<std::size_t> index;
  std::vector<double> scores(points.size(), -std::numeric_limits<double>::infinity());
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::optional<schedule::ProgramKey> k = key(points[i]);
    if (!k)
      continue;
    const model::ProgramFeatures& f = feature_cache_.at(*k);
    if (f.rows.empty())
      continue;
    batch.push_back(&f);
    index.push_back(i);
  }
  predictions += static_cast<std::int64_t>(batch.size());
  std::vector<double> s = model.predict(batch);
  for (std::size_t i = 0; i < index.size(); ++i)
    scores[index[i]] = s[i];
  return scores;
}

std::vector<Point> SearchContext::random_unmeasured(int n, const ProgramSet& exclude, int family) {
  std::vector<Point> out;
  ProgramSet taken = exclude;
  for (int attempt = 0; static_cast<int>(out.size()) < n && attempt < n * 50 + 100; ++attempt) {
    Point p = family >= 0 ? space.sample_family(family, rng) : space.sample(rng);
    std::optional<schedule::ProgramKey> k = key(p);
    if (!k || measured_programs.count(*k) || !taken.insert(*k).second)
      continue;
    out.push_back(std::move(p));
  }
  return out;
}

} // namespace kiln::search
