#include "random_schedule.h"

#include "kiln/schedule/transform_step.h"

#include <algorithm>
#include <array>
#include <optional>
#include <random>

namespace kiln::test {

using schedule::Annotation;
using schedule::Iterator;
using schedule::IterKind;
using schedule::Location;
using schedule::StageState;
using schedule::State;
using schedule::Step;

void RandomScheduleStats::add(const RandomScheduleStats& other) {
  proposed += other.proposed;
  refused += other.refused;
  for (const auto& [tag, n] : other.proposed_by_tag)
    proposed_by_tag[tag] += n;
  for (const auto& [tag, n] : other.refused_by_tag)
    refused_by_tag[tag] += n;
  for (const auto& [tag, text] : other.example_refusal)
    example_refusal.emplace(tag, text);
}

namespace {

enum class Kind {
  Split,
  Reorder,
  Fuse,
  ComputeAt,
  ComputeInline,
  ComputeRoot,
  CacheWrite,
  CacheRead,
  Vectorize,
  Parallel,
  Unroll,
  ClearAnnotation,
  Pragma,
};

struct Weighted {
  Kind kind;
  int weight;
};

constexpr std::array<Weighted, 13> kKinds = {{
    {Kind::Split, 22},
    {Kind::Reorder, 10},
    {Kind::Fuse, 8},
    {Kind::ComputeAt, 12},
    {Kind::ComputeInline, 7},
    {Kind::ComputeRoot, 3},
    {Kind::CacheWrite, 6},
    {Kind::CacheRead, 6},
    {Kind::Vectorize, 9},
    {Kind::Parallel, 6},
    {Kind::Unroll, 5},
    {Kind::ClearAnnotation, 1},
    {Kind::Pragma, 5},
}};

class Generator {
public:
  Generator(const ir::ComputeDAG& dag, std::uint64_t seed, RandomScheduleStats& stats,
            const RandomScheduleOptions& options)
      : state_(dag), rng_(seed), stats_(stats), options_(options) {}

  State run() {
    int proposals = uniform(options_.min_proposals, options_.max_proposals);
    for (int p = 0; p < proposals; ++p) {
      wild_ = chance(options_.wild);
      for (const Step& step : propose())
        if (!apply(step))
          break; // the rest of a proposal builds on its first step
    }
    return std::move(state_);
  }

private:
  // --- randomness ---

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::int64_t uniform64(std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T> const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }

  Kind pick_kind() {
    int total = 0;
    for (const Weighted& w : kKinds)
      total += w.weight;
    int r = uniform(0, total - 1);
    for (const Weighted& w : kKinds) {
      if (r < w.weight)
        return w.kind;
      r -= w.weight;
    }
    return Kind::Split;
  }

  // --- the state ---

  const ir::ComputeDAG& dag() const { return state_.dag(); }
  const std::vector<StageState>& stages() const { return state_.stages(); }
  bool is_compute(size_t i) const { return !dag().stage(static_cast<int>(i)).is_placeholder(); }
  bool has_loops(size_t i) const {
    return is_compute(i) && stages()[i].location != Location::Inline && !stages()[i].iters.empty();
  }
  bool exists(const std::string& name) const { return dag().find_stage(name) >= 0; }

  /// Whether a stage is computed at this loop (never, for a wild proposal:
  /// then the state must refuse what cannot apply).
  bool attached_at(const std::string& stage, const std::string& iter) const {
    if (wild_)
      return false;
    for (const StageState& s : stages())
      if (s.location == Location::At && s.at_stage == stage && s.at_iter == iter)
        return true;
    return false;
  }
  bool has_attached(const std::string& stage) const {
    if (wild_)
      return false;
    for (const StageState& s : stages())
      if (s.location == Location::At && s.at_stage == stage)
        return true;
    return false;
  }

  /// Indices of the stages that satisfy `pred`.
  template <typename Pred> std::vector<size_t> stages_where(Pred pred) const {
    std::vector<size_t> out;
    for (size_t i = 0; i < stages().size(); ++i)
      if (pred(i))
        out.push_back(i);
    return out;
  }

  std::vector<size_t> loop_stages() const {
    return stages_where([&](size_t i) { return has_loops(i); });
  }

  /// Applies a step; false (and counted) when the state refuses it.
  bool apply(const Step& step) {
    std::string tag(schedule::step_tag(step));
    ++stats_.proposed;
    ++stats_.proposed_by_tag[tag];
    auto err = state_.apply(step);
    if (!err)
      return true;
    ++stats_.refused;
    ++stats_.refused_by_tag[tag];
    stats_.example_refusal.emplace(tag, err->message());
    return false;
  }

  // --- proposals ---

  /// One proposal: usually one step, two for a cache_read followed by a
  /// compute_at into its reader. Empty when nothing applicable was found.
  std::vector<Step> propose() {
    for (int attempt = 0; attempt < 16; ++attempt) {
      std::vector<Step> steps = propose(pick_kind());
      if (!steps.empty())
        return steps;
    }
    return {};
  }

  std::vector<Step> propose(Kind kind) {
    switch (kind) {
    case Kind::Split:
      return split();
    case Kind::Reorder:
      return reorder();
    case Kind::Fuse:
      return fuse();
    case Kind::ComputeAt:
      return compute_at();
    case Kind::ComputeInline:
      return compute_inline();
    case Kind::ComputeRoot:
      return compute_root();
    case Kind::CacheWrite:
      return cache_write();
    case Kind::CacheRead:
      return cache_read();
    case Kind::Vectorize:
      return vectorize();
    case Kind::Parallel:
      return parallel();
    case Kind::Unroll:
      return unroll();
    case Kind::ClearAnnotation:
      return clear_annotation();
    case Kind::Pragma:
      return pragma();
    }
    return {};
  }

  std::vector<Step> split() {
    auto candidates = loop_stages();
    if (candidates.empty())
      return {};
    const StageState& st = stages()[pick(candidates)];
    std::vector<const Iterator*> iters;
    for (const Iterator& it : st.iters)
      if (!attached_at(st.name, it.name))
        iters.push_back(&it);
    if (iters.empty())
      return {};
    const Iterator& it = *pick(iters);
    std::vector<std::int64_t> factors;
    int n = chance(0.25) ? 2 : 1;
    for (int f = 0; f < n; ++f)
      factors.push_back(uniform64(1, it.extent + 2));
    return {schedule::SplitStep{st.name, it.name, factors}};
  }

  std::vector<Step> reorder() {
    auto candidates =
        stages_where([&](size_t i) { return has_loops(i) && stages()[i].iters.size() > 1; });
    if (candidates.empty())
      return {};
    const StageState& st = stages()[pick(candidates)];
    std::vector<std::string> order;
    for (const Iterator& it : st.iters)
      order.push_back(it.name);
    if (chance(0.5)) {
      std::shuffle(order.begin(), order.end(), rng_);
    } else {
      int a = uniform(0, static_cast<int>(order.size()) - 1);
      int b = uniform(0, static_cast<int>(order.size()) - 1);
      std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
    }
    return {schedule::ReorderStep{st.name, order}};
  }

  std::vector<Step> fuse() {
    struct Run {
      std::string stage;
      std::vector<std::string> iters;
    };
    std::vector<Run> runs;
    for (size_t i : loop_stages()) {
      const StageState& st = stages()[i];
      for (size_t first = 0; first < st.iters.size(); ++first)
        for (size_t len = 2; len <= 3 && first + len <= st.iters.size(); ++len) {
          Run run{st.name, {}};
          bool ok = true;
          for (size_t k = first; k < first + len; ++k) {
            ok &=
                st.iters[k].kind == st.iters[first].kind && !attached_at(st.name, st.iters[k].name);
            run.iters.push_back(st.iters[k].name);
          }
          if (ok)
            runs.push_back(std::move(run));
        }
    }
    if (runs.empty())
      return {};
    const Run& run = pick(runs);
    return {schedule::FuseStep{run.stage, run.iters}};
  }

  /// A loop of `target` to compute a stage at (not a vectorized one).
  std::optional<std::string> attach_point(const std::string& target) {
    int index = dag().find_stage(target);
    if (index < 0 || !has_loops(static_cast<size_t>(index)))
      return std::nullopt;
    std::vector<std::string> iters;
    for (const Iterator& it : stages()[static_cast<size_t>(index)].iters)
      if (wild_ || it.annotation != Annotation::Vectorize)
        iters.push_back(it.name);
    if (iters.empty())
      return std::nullopt;
    return pick(iters);
  }

  /// The stages that read stage `index` once inlined stages are
  /// substituted (an inlined reader stands for its own readers).
  std::vector<int> effective_consumers(int index) const {
    std::vector<int> out;
    for (int c : dag().consumers(index)) {
      if (stages()[static_cast<size_t>(c)].location != Location::Inline) {
        out.push_back(c);
        continue;
      }
      for (int cc : effective_consumers(c))
        if (std::find(out.begin(), out.end(), cc) == out.end())
          out.push_back(cc);
    }
    return out;
  }

  /// For a stage with several (effective) consumers: a consumer and its
  /// loop where all the others are computed already, if there is one.
  std::optional<std::pair<std::string, std::string>> shared_loop(int index) const {
    std::vector<int> consumers = effective_consumers(index);
    if (consumers.size() < 2)
      return std::nullopt;
    for (int t : consumers) {
      const std::string& target = stages()[static_cast<size_t>(t)].name;
      std::optional<std::string> loop;
      bool shared = true;
      for (int c : consumers) {
        const StageState& cs = stages()[static_cast<size_t>(c)];
        if (c == t)
          continue;
        shared = shared && cs.location == Location::At && cs.at_stage == target &&
                 (!loop || *loop == cs.at_iter);
        loop = cs.at_iter;
      }
      if (shared && loop)
        return std::pair{target, *loop};
    }
    return std::nullopt;
  }

  /// A stage computed inside a loop of its single (effective) consumer, or
  /// beside its other consumers at the loop of one they are computed at; a
  /// wild proposal picks any reader, inlined or not, direct or not.
  std::vector<Step> compute_at() {
    auto candidates = stages_where([&](size_t i) {
      if (!is_compute(i) || (!wild_ && dag().stage(static_cast<int>(i)).is_output))
        return false;
      auto consumers = effective_consumers(static_cast<int>(i));
      return wild_ ? !consumers.empty() || !dag().consumers(static_cast<int>(i)).empty()
                   : (consumers.size() == 1 && has_loops(static_cast<size_t>(consumers[0]))) ||
                         shared_loop(static_cast<int>(i));
    });
    if (candidates.empty())
      return {};
    size_t i = pick(candidates);
    if (auto shared = shared_loop(static_cast<int>(i)); shared && !wild_)
      return {schedule::ComputeAtStep{stages()[i].name, shared->first, shared->second}};
    std::vector<int> consumers = effective_consumers(static_cast<int>(i));
    if (wild_) {
      for (int c : dag().consumers(static_cast<int>(i)))
        consumers.push_back(c);
    }
    if (consumers.empty())
      return {};
    std::string target = dag().stage(pick(consumers)).name;
    auto iter = attach_point(target);
    if (!iter)
      return {};
    return {schedule::ComputeAtStep{stages()[i].name, target, *iter}};
  }

  std::vector<Step> compute_inline() {
    auto candidates = stages_where([&](size_t i) {
      const ir::Stage& s = dag().stage(static_cast<int>(i));
      return is_compute(i) && !s.is_output && !s.reduction() &&
             stages()[i].location != Location::Inline && !has_attached(s.name);
    });
    if (candidates.empty())
      return {};
    return {schedule::ComputeInlineStep{stages()[pick(candidates)].name}};
  }

  std::vector<Step> compute_root() {
    auto candidates = stages_where(
        [&](size_t i) { return is_compute(i) && stages()[i].location != Location::Root; });
    if (candidates.empty())
      return {};
    return {schedule::ComputeRootStep{stages()[pick(candidates)].name}};
  }

  std::vector<Step> cache_write() {
    auto candidates = stages_where([&](size_t i) {
      const StageState& st = stages()[i];
      return is_compute(i) && (wild_ || (st.location == Location::Root && !st.transformed)) &&
             !has_attached(st.name) && !exists(st.name + ".local");
    });
    if (candidates.empty())
      return {};
    return {schedule::CacheWriteStep{stages()[pick(candidates)].name}};
  }

  std::vector<Step> cache_read() {
    auto candidates = stages_where([&](size_t i) {
      return !dag().consumers(static_cast<int>(i)).empty() && !exists(stages()[i].name + ".cache");
    });
    if (candidates.empty())
      return {};
    size_t i = pick(candidates);
    std::string reader = dag().stage(pick(dag().consumers(static_cast<int>(i)))).name;
    std::vector<Step> steps{schedule::CacheReadStep{stages()[i].name, reader}};
    if (chance(0.6))
      if (auto iter = attach_point(reader))
        steps.push_back(schedule::ComputeAtStep{stages()[i].name + ".cache", reader, *iter});
    return steps;
  }

  std::vector<Step> vectorize() {
    auto candidates = loop_stages();
    if (candidates.empty())
      return {};
    const StageState& st = stages()[pick(candidates)];
    std::vector<std::string> iters;
    for (const Iterator& it : st.iters)
      if (it.kind == IterKind::Spatial && !attached_at(st.name, it.name))
        iters.push_back(it.name);
    if (iters.empty())
      return {};
    const Iterator& innermost = st.iters.back();
    bool inner = innermost.kind == IterKind::Spatial && !attached_at(st.name, innermost.name);
    std::string iter = inner && chance(0.5) ? innermost.name : pick(iters);
    return {schedule::AnnotateStep{st.name, iter, Annotation::Vectorize}};
  }

  std::vector<Step> parallel() {
    auto candidates = loop_stages();
    if (candidates.empty())
      return {};
    const StageState& st = stages()[pick(candidates)];
    std::vector<std::string> iters;
    for (const Iterator& it : st.iters)
      if (it.kind == IterKind::Spatial)
        iters.push_back(it.name);
    if (iters.empty())
      return {};
    std::string iter = chance(0.6) ? iters.front() : pick(iters);
    return {schedule::AnnotateStep{st.name, iter, Annotation::Parallel}};
  }

  std::vector<Step> unroll() {
    auto candidates = loop_stages();
    if (candidates.empty())
      return {};
    const StageState& st = stages()[pick(candidates)];
    std::int64_t unrolled = 1;
    for (const Iterator& it : st.iters)
      if (it.annotation == Annotation::Unroll)
        unrolled *= it.extent;
    std::vector<std::string> iters;
    for (const Iterator& it : st.iters)
      if (it.annotation != Annotation::Unroll && unrolled * it.extent <= options_.max_unrolled)
        iters.push_back(it.name);
    if (iters.empty())
      return {};
    return {schedule::AnnotateStep{st.name, pick(iters), Annotation::Unroll}};
  }

  std::vector<Step> clear_annotation() {
    std::vector<schedule::AnnotateStep> marked;
    for (size_t i : loop_stages())
      for (const Iterator& it : stages()[i].iters)
        if (it.annotation != Annotation::None)
          marked.push_back({stages()[i].name, it.name, Annotation::None});
    if (marked.empty())
      return {};
    return {pick(marked)};
  }

  std::vector<Step> pragma() {
    auto candidates = loop_stages();
    if (candidates.empty())
      return {};
    static const std::vector<std::int64_t> values = {0, 16, 64, 512};
    return {schedule::PragmaStep{stages()[pick(candidates)].name, pick(values)}};
  }

  State state_;
  std::mt19937_64 rng_;
  RandomScheduleStats& stats_;
  const RandomScheduleOptions& options_;
  bool wild_ = false; ///< this proposal skips the generator's own checks
};

} // namespace

State random_schedule(const ir::ComputeDAG& dag, std::uint64_t seed, RandomScheduleStats* stats,
                      const RandomScheduleOptions& options) {
  RandomScheduleStats local;
  State state = Generator(dag, seed, stats ? *stats : local, options).run();
  return state;
}

} // namespace kiln::test
