#include "kiln/space/sketch.h"

#include "sketch_analysis.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace kiln::space {

using schedule::AnnotateStep;
using schedule::Annotation;
using schedule::Step;

namespace {

/// The choices so far of one sketch being derived.
struct Draft {
  std::vector<StagePlan> plans;
  std::string name;
};

} // namespace

// --- steps of a filled config ---

namespace {
class StepWriter {
public:
  StepWriter(const Sketch& sketch, const SketchConfig& config, std::vector<Step>& out)
      : sketch_(sketch), config_(config), out_(out) {}

  /// The factors chosen for axis `axis` of stage `stage`.
  const std::vector<std::int64_t>& factors(const std::string& stage, const std::string& axis) {
    for (size_t i = 0; i < sketch_.axes().size(); ++i)
      if (sketch_.axes()[i].stage == stage && sketch_.axes()[i].axis == axis)
        return config_.tiles.at(i);
    throw UserError(Error("internal", "sketch has no tile axis " + stage + "." + axis));
  }

  void split(const std::string& stage, const std::string& iter, std::vector<std::int64_t> inner) {
    out_.push_back(schedule::SplitStep{stage, iter, std::move(inner)});
  }

  /// Fuses the first `k` names (k >= 2) and returns the loop list with the
  /// fused name in their place.
  std::vector<std::string> fuse_prefix(const std::string& stage, std::vector<std::string> loops,
                                       int k) {
    if (k < 2)
      return loops;
    std::vector<std::string> parts(loops.begin(), loops.begin() + k);
    std::string fused = fmt::format("{}", fmt::join(parts, "@"));
    out_.push_back(schedule::FuseStep{stage, parts});
    loops.erase(loops.begin(), loops.begin() + k);
    loops.insert(loops.begin(), fused);
    return loops;
  }

  void annotate(const std::string& stage, const std::string& iter, Annotation a) {
    out_.push_back(AnnotateStep{stage, iter, a});
  }

  void pragma(const std::string& stage, std::int64_t value) {
    if (value > 0)
      out_.push_back(schedule::PragmaStep{stage, value});
  }

  const SketchConfig& config() const { return config_; }
  std::vector<Step>& out() { return out_; }

private:
  const Sketch& sketch_;
  const SketchConfig& config_;
  std::vector<Step>& out_;
};

std::int64_t product(const std::vector<std::int64_t>& v, size_t from, size_t to) {
  std::int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= v[i];
  return p;
}
} // namespace

int Sketch::max_parallel(int plan) const {
  const StagePlan& p = plans_.at(plan);
  int spatial = 0;
  for (const TileAxis& a : axes_)
    if (a.stage == p.stage && !a.reduce)
      ++spatial;
  return spatial;
}

bool Sketch::uses_unroll(int plan) const {
  const StagePlan& p = plans_.at(plan);
  if (p.kind == PlanKind::MultiLevel)
    return true;
  if (p.kind != PlanKind::Simple)
    return false;
  return std::any_of(axes_.begin(), axes_.end(),
                     [&](const TileAxis& a) { return a.stage == p.stage && a.reduce; });
}

std::vector<Step> Sketch::structure_steps() const {
  std::vector<Step> out;
  for (const StagePlan& p : plans_)
    if (p.kind == PlanKind::Inline)
      out.push_back(schedule::ComputeInlineStep{p.stage});
  for (const StagePlan& p : plans_)
    if (p.kind == PlanKind::MultiLevel && p.cache_write)
      out.push_back(schedule::CacheWriteStep{p.stage});
  for (const StagePlan& p : plans_)
    if (!p.weights.empty())
      out.push_back(schedule::CacheReadStep{p.weights, p.tiled});
  return out;
}

/// Orders the register tile's loops (`loops`, of axes split into `.N`) to
/// keep the fewest values live: the axes the broadcast operands read
/// outside, the others, read only by the vector operands, inside them and
/// the vectorized axis innermost. Each broadcast element then feeds its
/// FMAs as soon as it is loaded, while the few vectors stay in registers
/// across the tile. In the op's axis order, conv2d_nchwc's output-channel
/// block ran outside its x: 14 broadcasts were live beside 28 accumulators
/// and spilled (147 against 351 GFLOPS).
static void order_register_tile(std::vector<std::string>& loops, const StagePlan& p,
                                const std::string& vector_loop) {
  auto axis_of = [](const std::string& loop) { return loop.substr(0, loop.rfind('.')); };
  std::stable_partition(loops.begin(), loops.end(), [&](const std::string& loop) {
    return std::find(p.broadcast_axes.begin(), p.broadcast_axes.end(), axis_of(loop)) !=
           p.broadcast_axes.end();
  });
  std::stable_partition(loops.begin(), loops.end(),
                        [&](const std::string& loop) { return loop != vector_loop; });
}

std::vector<Step> Sketch::steps(const SketchConfig& config) const {
  std::vector<Step> out = structure_steps();
  StepWriter w(*this, config, out);

  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    const StagePlan& p = plans_[pi];
    int parallel = config.parallel.at(pi);
    std::int64_t unroll = config.unroll.at(pi);
    std::vector<const TileAxis*> spatial, reduce;
    for (const TileAxis& a : axes_)
      if (a.stage == p.stage)
        (a.reduce ? reduce : spatial).push_back(&a);

    if (p.kind == PlanKind::Simple) {
      std::vector<std::string> outer, inner, red;
      for (const TileAxis* a : spatial) {
        const auto& f = w.factors(a->stage, a->axis);
        w.split(p.stage, a->axis, {f[1]});
        outer.push_back(a->axis + ".0");
        inner.push_back(a->axis + ".1");
      }
      for (const TileAxis* a : reduce)
        red.push_back(a->axis);
      std::vector<std::string> order = outer;
      order.insert(order.end(), red.begin(), red.end());
      order.insert(order.end(), inner.begin(), inner.end());
      out.push_back(schedule::ReorderStep{p.stage, order});
      std::vector<std::string> loops = w.fuse_prefix(p.stage, outer, parallel);
      if (parallel > 0)
        w.annotate(p.stage, loops[0], Annotation::Parallel);
      if (!spatial.empty() && w.factors(p.stage, spatial.back()->axis)[1] > 1)
        w.annotate(p.stage, inner.back(), Annotation::Vectorize);
      if (!reduce.empty())
        w.pragma(p.stage, unroll);
      continue;
    }
    if (p.kind == PlanKind::Root && !p.inside.empty())
      continue; // its steps follow its tiled stage's
    if (p.kind == PlanKind::Root) {
      // Every axis but the last fused and parallel (one task per row, and
      // on one core the loop simply runs), the last maybe vectorized.
      std::vector<std::string> loops = p.root_axes;
      if (loops.size() > 1) {
        std::string last = loops.back();
        loops = w.fuse_prefix(p.stage, loops, static_cast<int>(loops.size()) - 1);
        w.annotate(p.stage, loops.front(), Annotation::Parallel);
        if (p.root_vectorize)
          w.annotate(p.stage, last, Annotation::Vectorize);
      }
      continue;
    }
    if (p.kind != PlanKind::MultiLevel)
      continue;

    const std::string& t = p.tiled;
    if (p.outer.empty()) {
      // In place: S0 S1 R0 S2 R1 S3.
      std::vector<std::vector<std::string>> levels(6);
      for (const TileAxis* a : spatial) {
        const auto& f = w.factors(a->stage, a->axis);
        w.split(t, a->axis, {f[1], f[2], f[3]});
        for (int l = 0; l < 4; ++l)
          levels[l == 0   ? 0
                 : l == 1 ? 1
                 : l == 2 ? 3
                          : 5]
              .push_back(fmt::format("{}.{}", a->axis, l));
      }
      for (const TileAxis* a : reduce) {
        w.split(t, a->axis, {w.factors(a->stage, a->axis)[1]});
        levels[2].push_back(a->axis + ".0");
        levels[4].push_back(a->axis + ".1");
      }
      order_register_tile(levels[5], p, spatial.back()->axis + ".3");
      std::vector<std::string> order;
      for (const auto& l : levels)
        order.insert(order.end(), l.begin(), l.end());
      out.push_back(schedule::ReorderStep{t, order});
      std::vector<std::string> loops = w.fuse_prefix(t, levels[0], parallel);
      if (parallel > 0)
        w.annotate(t, loops[0], Annotation::Parallel);
      if (w.factors(p.stage, spatial.back()->axis)[3] > 1)
        w.annotate(t, levels[5].back(), Annotation::Vectorize);
      w.pragma(t, unroll);
      continue;
    }

    // The outer levels on the consumer (or the cache-write copy), the inner
    // ones on the tiled stage, computed at the end of level `level`.
    const std::string& o = p.outer;
    std::vector<std::vector<std::string>> outer_levels(p.level + 1);
    for (size_t d = 0; d < spatial.size(); ++d) {
      const auto& f = w.factors(spatial[d]->stage, spatial[d]->axis);
      const std::string& axis = p.outer_axes.at(d);
      if (p.level == 1)
        w.split(o, axis, {product(f, 1, 4)});
      else
        w.split(o, axis, {f[1], product(f, 2, 4)});
      for (int l = 0; l <= p.level; ++l)
        outer_levels[l].push_back(fmt::format("{}.{}", axis, l));
    }
    std::vector<std::string> order;
    for (const auto& l : outer_levels)
      order.insert(order.end(), l.begin(), l.end());
    out.push_back(schedule::ReorderStep{o, order});
    std::vector<std::string> level0 = w.fuse_prefix(o, outer_levels[0], parallel);
    if (parallel > 0)
      w.annotate(o, level0[0], Annotation::Parallel);
    std::string attach = p.level == 1 ? level0.back() : outer_levels[1].back();
    // The copy-out vectorizes the last axis; under weight vectorization its
    // whole tile, which the register tile no longer walks in vectors.
    const auto& last = w.factors(p.stage, spatial.back()->axis);
    if ((p.vector_axis.empty() ? last[3] : product(last, p.level, 4)) > 1)
      w.annotate(o, outer_levels[p.level].back(), Annotation::Vectorize);

    // Tiled stage over the region: level 1 → S R S R S, level 2 → R S R S.
    std::vector<std::vector<std::string>> levels(5);
    for (const TileAxis* a : spatial) {
      const auto& f = w.factors(a->stage, a->axis);
      if (p.level == 1) {
        w.split(t, a->axis, {f[2], f[3]});
        levels[0].push_back(a->axis + ".0");
        levels[2].push_back(a->axis + ".1");
        levels[4].push_back(a->axis + ".2");
      } else {
        w.split(t, a->axis, {f[3]});
        levels[2].push_back(a->axis + ".0");
        levels[4].push_back(a->axis + ".1");
      }
    }
    for (const TileAxis* a : reduce) {
      w.split(t, a->axis, {w.factors(a->stage, a->axis)[1]});
      levels[1].push_back(a->axis + ".0");
      levels[3].push_back(a->axis + ".1");
    }
    // Packing: the packed input's axes outermost in the middle level, so
    // its panel is copied once per block of them and reused by the others.
    std::string pack_at;
    if (!p.pack.empty()) {
      auto is_pack_axis = [&](const std::string& loop) {
        std::string axis = loop.substr(0, loop.rfind('.'));
        return std::find(p.pack_axes.begin(), p.pack_axes.end(), axis) != p.pack_axes.end();
      };
      std::stable_partition(levels[2].begin(), levels[2].end(), is_pack_axis);
      for (const std::string& loop : levels[2])
        if (is_pack_axis(loop))
          pack_at = loop;
    }
    std::string vector_axis = p.vector_axis.empty() ? spatial.back()->axis : p.vector_axis;
    order_register_tile(levels[4], p, vector_axis + (p.level == 1 ? ".2" : ".1"));
    std::vector<std::string> inner_order;
    for (const auto& l : levels)
      inner_order.insert(inner_order.end(), l.begin(), l.end());
    out.push_back(schedule::ReorderStep{t, inner_order});
    out.push_back(schedule::ComputeAtStep{t, o, attach});
    if (w.factors(p.stage, vector_axis)[3] > 1)
      w.annotate(t, levels[4].back(), Annotation::Vectorize);
    w.pragma(t, unroll);
    for (const StagePlan& q : plans_)
      if (q.kind == PlanKind::Root && q.inside == t) {
        out.push_back(schedule::ComputeAtStep{q.stage, t, inner_order.front()});
        if (q.root_vectorize)
          w.annotate(q.stage, q.root_axes.back(), Annotation::Vectorize);
      }
    if (!pack_at.empty()) {
      out.push_back(schedule::CacheReadStep{p.pack, t});
      out.push_back(schedule::ComputeAtStep{p.pack + ".cache", t, pack_at});
      w.annotate(p.pack + ".cache", p.pack_inner, Annotation::Vectorize);
    }
  }
  return out;
}

// --- deriving sketches ---

static StagePlan plan_of(PlanKind kind, const std::string& stage) {
  StagePlan p;
  p.kind = kind;
  p.stage = stage;
  return p;
}

/// A multi-level tiling of `stage` (in `tiled`), its outer levels on
/// `outer` (over `outer_axes`) and computed at `level`, or in place.
static StagePlan multi_level(const std::string& stage, const std::string& tiled,
                             const std::string& outer, std::vector<std::string> outer_axes,
                             bool cache_write, int level) {
  StagePlan p = plan_of(PlanKind::MultiLevel, stage);
  p.tiled = tiled;
  p.outer = outer;
  p.outer_axes = std::move(outer_axes);
  p.cache_write = cache_write;
  p.level = level;
  return p;
}

static StagePlan root_plan(const ir::Stage& stage, bool vectorize) {
  StagePlan p = plan_of(PlanKind::Root, stage.name);
  for (const ir::IterVar& a : stage.axes)
    p.root_axes.push_back(a.name);
  p.root_vectorize = vectorize;
  return p;
}

SketchSpace::SketchSpace(const ir::ComputeDAG& dag, const SpaceParams& params)
    : dag_(dag), params_(params) {
  Analysis an(dag);
  std::vector<Draft> drafts{Draft{}};
  std::set<std::string> handled; // consumers that hold a producer's outer tiles
  const auto& stages = dag.stages();
  for (size_t i = stages.size(); i-- > 0;) {
    const ir::Stage& s = stages[i];
    if (s.is_placeholder())
      continue;
    if (an.inlined(s.name)) {
      // A register tile that broadcasts what it reads of this stage (a
      // weight-vectorized conv's data, a channel-blocked conv's): inlined,
      // a padding select would run once per broadcast, so it stays a stage,
      // computed inside each tile.
      std::vector<int> readers = dag.consumers(static_cast<int>(i));
      for (Draft& d : drafts) {
        auto broadcast = std::find_if(d.plans.begin(), d.plans.end(), [&](const StagePlan& q) {
          return q.kind == PlanKind::MultiLevel && q.cache_write && q.level == 1 &&
                 std::find(readers.begin(), readers.end(), dag.find_stage(q.stage)) !=
                     readers.end() &&
                 an.broadcast_only(dag.find_stage(q.stage), s.name, q.vector_axis);
        });
        if (broadcast == d.plans.end()) {
          d.plans.push_back(plan_of(PlanKind::Inline, s.name));
          continue;
        }
        StagePlan data = root_plan(s, true);
        data.inside = broadcast->tiled;
        d.plans.push_back(data);
      }
      continue;
    }
    if (an.has_data_reuse(static_cast<int>(i))) {
      int consumer = an.elementwise_consumer(static_cast<int>(i));
      std::vector<Draft> next;
      for (const Draft& d : drafts) {
        auto variant = [&](StagePlan plan, const std::string& tag) {
          plan.broadcast_axes =
              an.broadcast_axes(static_cast<int>(i),
                                plan.vector_axis.empty() ? s.axes.back().name : plan.vector_axis);
          Draft v = d;
          v.plans.push_back(plan);
          v.name += (v.name.empty() ? "" : ", ") + tag;
          next.push_back(std::move(v));
        };
        if (consumer >= 0) {
          const ir::Stage& c = stages[consumer];
          std::vector<std::string> axes;
          for (const ir::IterVar& a : c.axes)
            axes.push_back(a.name);
          // The consumer's own (simple) plan gives way to the fused tiling.
          auto strip = [&](Draft& v) {
            v.plans.erase(std::remove_if(v.plans.begin(), v.plans.end(),
                                         [&](const StagePlan& q) { return q.stage == c.name; }),
                          v.plans.end());
            v.plans.push_back(plan_of(PlanKind::Outer, c.name));
          };
          for (int level : {1, 2}) {
            variant(multi_level(s.name, s.name, c.name, axes, false, level),
                    fmt::format("{} tiled, fused into {} at level {}", s.name, c.name, level));
            strip(next.back());
          }
          continue;
        }
        std::vector<std::string> axes;
        for (const ir::IterVar& a : s.axes)
          axes.push_back(a.name);
        for (int level : {1, 2})
          variant(multi_level(s.name, s.name + ".local", s.name, axes, true, level),
                  fmt::format("{} tiled in {}.local at level {}", s.name, s.name, level));
        variant(multi_level(s.name, s.name, "", {}, false, 0),
                fmt::format("{} tiled in place", s.name));
        // Last, so that the sketches logged before it keep their numbers.
        std::optional<PackableInput> packable = an.packable_input(static_cast<int>(i));
        std::string pack = packable ? packable->input : "";
        if (packable) {
          StagePlan plan = multi_level(s.name, s.name + ".local", s.name, axes, true, 1);
          plan.pack = pack;
          plan.pack_axes = packable->axes;
          plan.pack_inner = fmt::format("ax{}", dag.stage(dag.find_stage(pack)).axes.size() - 1);
          variant(plan,
                  fmt::format("{} tiled in {}.local at level 1, {} packed", s.name, s.name, pack));
        }
        std::optional<VectorizableWeights> vectorizable =
            an.vectorizable_weights(static_cast<int>(i));
        if (!packable && vectorizable) {
          const std::string& weights = vectorizable->weights;
          const std::string& vector_axis = vectorizable->axis;
          StagePlan plan = multi_level(s.name, s.name + ".local", s.name, axes, true, 1);
          plan.vector_axis = vector_axis;
          plan.weights = weights;
          variant(plan, fmt::format("{} tiled in {}.local at level 1, vectorized over {}, {} "
                                    "copied with {} innermost",
                                    s.name, s.name, vector_axis, weights, vector_axis));
          // Stored with the vectorized axis innermost, the copy's last axis
          // would be a scatter: not vectorized.
          next.back().plans.push_back(root_plan(scheduled_stage(dag, weights + ".cache"), false));
        }
      }
      drafts = std::move(next);
      continue;
    }
    for (Draft& d : drafts) {
      bool outer = std::any_of(d.plans.begin(), d.plans.end(), [&](const StagePlan& q) {
        return q.stage == s.name && q.kind == PlanKind::Outer;
      });
      if (!outer)
        d.plans.push_back(plan_of(PlanKind::Simple, s.name));
    }
  }

  for (Draft& d : drafts) {
    // Plans in DAG order, so the steps read producer to consumer.
    std::sort(d.plans.begin(), d.plans.end(), [&](const StagePlan& a, const StagePlan& b) {
      return dag.find_stage(a.stage) < dag.find_stage(b.stage);
    });
    std::vector<TileAxis> axes;
    const std::int64_t lanes = std::max(params.vector_lanes, 1);
    for (const StagePlan& p : d.plans) {
      if (p.kind != PlanKind::MultiLevel && p.kind != PlanKind::Simple)
        continue;
      const ir::Stage st = scheduled_stage(dag, p.stage);
      int parts = p.kind == PlanKind::MultiLevel ? 4 : 2;
      for (size_t a = 0; a < st.axes.size(); ++a) {
        bool vectorized =
            p.vector_axis.empty() ? a + 1 == st.axes.size() : st.axes[a].name == p.vector_axis;
        // The innermost tile of the vectorized axis: at most 4 vectors, and
        // whole vectors when the extent allows (TileAxis::innermost_multiple).
        std::int64_t max_inner = vectorized ? std::min(params.max_innermost_factor, lanes * 4)
                                            : params.max_innermost_factor;
        bool whole_vectors = vectorized && st.axes[a].extent % lanes == 0 && lanes <= max_inner;
        axes.push_back({p.stage, st.axes[a].name, st.axes[a].extent, parts, false, max_inner,
                        whole_vectors ? lanes : 1});
      }
      if (const ir::Reduce* r = st.reduction()) {
        std::int64_t max_inner =
            p.pack.empty() ? params.max_innermost_factor : params.max_pack_depth;
        for (const ir::IterVar& ra : r->axes)
          axes.push_back({p.stage, ra.name, ra.extent, 2, true, max_inner});
      }
    }
    if (d.name.empty())
      d.name = "simple";
    sketches_.emplace_back(d.name, d.plans, std::move(axes));
  }
  for (const Sketch& sk : sketches_) {
    auto st = schedule::State::replay(dag_, sk.structure_steps());
    structures_.push_back(st ? std::optional<schedule::State>(std::move(*st)) : std::nullopt);
  }
}

Expected<schedule::State> SketchSpace::state(const SketchConfig& config) const {
  const auto& structure = structures_.at(config.sketch);
  return structure ? schedule::State::replay(*structure, steps(config))
                   : schedule::State::replay(dag_, steps(config));
}

std::string SketchSpace::describe() const {
  std::string out;
  for (size_t i = 0; i < sketches_.size(); ++i) {
    const Sketch& sk = sketches_[i];
    SketchConfig ones;
    ones.sketch = static_cast<int>(i);
    std::string open;
    for (const TileAxis& a : sk.axes()) {
      std::vector<std::int64_t> f(a.parts, 1);
      f[0] = a.extent;
      ones.tiles.push_back(f);
      open += fmt::format("  {}.{} ({}): {} tile sizes\n", a.stage, a.axis, a.extent, a.parts);
    }
    for (size_t p = 0; p < sk.plans().size(); ++p) {
      ones.parallel.push_back(std::min(1, sk.max_parallel(static_cast<int>(p))));
      ones.unroll.push_back(0);
    }
    out += fmt::format("sketch {}: {}\nopen decisions:\n{}", i, sk.name(), open);
    for (size_t p = 0; p < sk.plans().size(); ++p)
      if (sk.max_parallel(static_cast<int>(p)) > 0)
        out += fmt::format("  {}: parallel outer loops (0..{}), auto_unroll_max_step\n",
                           sk.plans()[p].stage, sk.max_parallel(static_cast<int>(p)));
    auto state = schedule::State::replay(dag_, sk.steps(ones));
    if (!state) {
      out += "  (cannot show: " + state.error().message() + ")\n";
      continue;
    }
    out += "loop nest with every tile size 1 but the outermost:\n";
    out += schedule::to_string(schedule::lower(*state));
    out += "\n";
  }
  return out;
}

} // namespace kiln::space
