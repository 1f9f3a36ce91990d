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

int Sketch::max_parallel(int plan) const {
  const std::string& stage = stage_of(plans_.at(plan));
  int spatial = 0;
  for (const TileAxis& a : axes_)
    if (a.stage == stage && !a.reduce)
      ++spatial;
  return spatial;
}

bool Sketch::uses_unroll(int plan) const {
  const StagePlan& p = plans_.at(plan);
  if (std::holds_alternative<MultiLevelPlan>(p))
    return true;
  if (!std::holds_alternative<SimplePlan>(p))
    return false;
  return std::any_of(axes_.begin(), axes_.end(),
                     [&](const TileAxis& a) { return a.stage == stage_of(p) && a.reduce; });
}

// --- deriving sketches ---

/// A multi-level tiling of `stage` (in `tiled`), its outer levels on
/// `outer` (over `outer_axes`) and computed at `level`, or in place.
static MultiLevelPlan multi_level(const std::string& stage, const std::string& tiled,
                                  const std::string& outer, std::vector<std::string> outer_axes,
                                  bool cache_write, int level) {
  MultiLevelPlan p;
  p.stage = stage;
  p.tiled = tiled;
  p.outer = outer;
  p.outer_axes = std::move(outer_axes);
  p.cache_write = cache_write;
  p.level = level;
  return p;
}

static RootPlan root_plan(const ir::Stage& stage, bool vectorize) {
  RootPlan p;
  p.stage = stage.name;
  for (const ir::IterVar& a : stage.axes)
    p.axes.push_back(a.name);
  p.vectorize = vectorize;
  return p;
}

/// The tile decisions of a stage tiled in `parts` levels: its spatial axes,
/// the vectorized one (`vector_axis`, or the last when empty) capped as a
/// register's vectors are, then its reduction axes in 2 levels, capped at
/// `max_reduce_inner`.
static void add_tile_axes(std::vector<TileAxis>& axes, const ir::Stage& st, int parts,
                          const std::string& vector_axis, std::int64_t max_reduce_inner,
                          const SpaceParams& params) {
  const std::int64_t lanes = std::max(params.vector_lanes, 1);
  for (size_t a = 0; a < st.axes.size(); ++a) {
    bool vectorized =
        vector_axis.empty() ? a + 1 == st.axes.size() : st.axes[a].name == vector_axis;
    // The innermost tile of the vectorized axis: at most 4 vectors, and
    // whole vectors when the extent allows (TileAxis::innermost_multiple).
    std::int64_t max_inner =
        vectorized ? std::min(params.max_innermost_factor, lanes * 4) : params.max_innermost_factor;
    bool whole_vectors = vectorized && st.axes[a].extent % lanes == 0 && lanes <= max_inner;
    axes.push_back({st.name, st.axes[a].name, st.axes[a].extent, parts, false, max_inner,
                    whole_vectors ? lanes : 1});
  }
  if (const ir::Reduce* r = st.reduction())
    for (const ir::IterVar& ra : r->axes)
      axes.push_back({st.name, ra.name, ra.extent, 2, true, max_reduce_inner});
}

/// The open tile decisions of a sketch's plans: the multi-level and simple
/// tilings', in plan order.
static std::vector<TileAxis> tile_axes(const ir::ComputeDAG& dag,
                                       const std::vector<StagePlan>& plans,
                                       const SpaceParams& params) {
  std::vector<TileAxis> axes;
  for (const StagePlan& plan : plans) {
    if (const auto* p = std::get_if<MultiLevelPlan>(&plan))
      add_tile_axes(axes, scheduled_stage(dag, p->stage), 4,
                    p->weight_vectorization ? p->weight_vectorization->axis : "",
                    p->packing ? params.max_pack_depth : params.max_innermost_factor, params);
    if (const auto* p = std::get_if<SimplePlan>(&plan))
      add_tile_axes(axes, scheduled_stage(dag, p->stage), 2, "", params.max_innermost_factor,
                    params);
  }
  return axes;
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
        auto broadcast = std::find_if(d.plans.begin(), d.plans.end(), [&](const StagePlan& plan) {
          const auto* q = std::get_if<MultiLevelPlan>(&plan);
          return q && q->cache_write && q->level == 1 &&
                 std::find(readers.begin(), readers.end(), dag.find_stage(q->stage)) !=
                     readers.end() &&
                 an.broadcast_only(dag.find_stage(q->stage), s.name,
                                   q->weight_vectorization ? q->weight_vectorization->axis : "");
        });
        if (broadcast == d.plans.end()) {
          d.plans.push_back(InlinePlan{s.name});
          continue;
        }
        RootPlan data = root_plan(s, true);
        data.inside = std::get<MultiLevelPlan>(*broadcast).tiled;
        d.plans.push_back(data);
      }
      continue;
    }
    if (an.has_data_reuse(static_cast<int>(i))) {
      int consumer = an.elementwise_consumer(static_cast<int>(i));
      std::vector<Draft> next;
      for (const Draft& d : drafts) {
        auto variant = [&](MultiLevelPlan plan, const std::string& tag) {
          plan.broadcast_axes = an.broadcast_axes(
              static_cast<int>(i),
              plan.weight_vectorization ? plan.weight_vectorization->axis : s.axes.back().name);
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
                                         [&](const StagePlan& q) { return stage_of(q) == c.name; }),
                          v.plans.end());
            v.plans.push_back(OuterPlan{c.name});
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
          MultiLevelPlan plan = multi_level(s.name, s.name + ".local", s.name, axes, true, 1);
          plan.packing =
              Packing{pack, packable->axes,
                      fmt::format("ax{}", dag.stage(dag.find_stage(pack)).axes.size() - 1)};
          variant(plan,
                  fmt::format("{} tiled in {}.local at level 1, {} packed", s.name, s.name, pack));
        }
        std::optional<VectorizableWeights> vectorizable =
            an.vectorizable_weights(static_cast<int>(i));
        if (!packable && vectorizable) {
          const std::string& weights = vectorizable->weights;
          const std::string& vector_axis = vectorizable->axis;
          MultiLevelPlan plan = multi_level(s.name, s.name + ".local", s.name, axes, true, 1);
          plan.weight_vectorization = WeightVectorization{vector_axis, weights};
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
        return stage_of(q) == s.name && std::holds_alternative<OuterPlan>(q);
      });
      if (!outer)
        d.plans.push_back(SimplePlan{s.name});
    }
  }

  for (Draft& d : drafts) {
    // Plans in DAG order, so the steps read producer to consumer.
    std::sort(d.plans.begin(), d.plans.end(), [&](const StagePlan& a, const StagePlan& b) {
      return dag.find_stage(stage_of(a)) < dag.find_stage(stage_of(b));
    });
    if (d.name.empty())
      d.name = "simple";
    sketches_.emplace_back(d.name, d.plans, tile_axes(dag, d.plans, params));
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
                           stage_of(sk.plans()[p]), sk.max_parallel(static_cast<int>(p)));
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
