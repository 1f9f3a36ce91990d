#include "kiln/space/sketch.h"

#include "sketch_analysis.h"
#include "sketch_rules.h"

#include "kiln/schedule/lower.h"
#include "kiln/space/factorization.h"
#include "kiln/support/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::space {

const std::vector<std::vector<std::int64_t>>& TileAxis::candidates() const {
  return tails ? tilings(extent, parts, max_innermost, innermost_multiple, vector_lanes)
               : factorizations(extent, parts, max_innermost, innermost_multiple);
}

bool TileAxis::has_tailed_candidates() const {
  return tails && candidates().size() !=
                      factorizations(extent, parts, max_innermost, innermost_multiple).size();
}

bool TileAxis::admits(const std::vector<std::int64_t>& factors) const {
  if (static_cast<int>(factors.size()) != parts || !is_tiling(extent, factors))
    return false;
  std::int64_t inner = 1; // no overflow: is_tiling checked the product
  for (size_t i = 1; i < factors.size(); ++i)
    inner *= factors[i];
  return tails || extent % inner == 0;
}

int Sketch::max_parallel(int plan) const {
  // A row plan's parallel loop is its outer row loop; its members are
  // computed inside it.
  if (std::holds_alternative<RowsPlan>(plans_.at(plan)))
    return 1;
  if (const auto* simple = std::get_if<SimplePlan>(&plans_.at(plan)); simple && simple->in_rows)
    return 0;
  const std::string& stage = stage_of(plans_.at(plan));
  int spatial = 0;
  for (const TileAxis& a : axes_)
    if (a.stage == stage && !a.reduce)
      ++spatial;
  return spatial;
}

bool Sketch::uses_unroll(int plan) const {
  const StagePlan& p = plans_.at(plan);
  if (std::holds_alternative<MultiLevelPlan>(p) || std::holds_alternative<RfactorPlan>(p))
    return true;
  if (!std::holds_alternative<SimplePlan>(p))
    return false;
  return std::any_of(axes_.begin(), axes_.end(),
                     [&](const TileAxis& a) { return a.stage == stage_of(p) && a.reduce; });
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
                    whole_vectors ? lanes : 1, params.tail_tiles, vectorized ? lanes : 1});
  }
  // A simple plan does not split its reduction (simple_steps): tails there
  // would only be more names for one program.
  if (const ir::Reduce* r = st.reduction())
    for (const ir::IterVar& ra : r->axes)
      axes.push_back({st.name, ra.name, ra.extent, 2, true, max_reduce_inner, 1,
                      params.tail_tiles && parts > 2, 1});
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
    if (const auto* p = std::get_if<RfactorPlan>(&plan)) {
      // The factor: the partials' vector, 1 to 4 whole vectors (their
      // extent rounded up when the axis is not whole vectors).
      const ir::Stage& st = scheduled_stage(dag, p->stage);
      const auto& reduce = st.reduction()->axes;
      auto a = std::find_if(reduce.begin(), reduce.end(),
                            [&](const ir::IterVar& r) { return r.name == p->axis; });
      KILN_ASSERT(a != reduce.end(), "the rfactor rule names a reduction axis of its stage");
      const std::int64_t lanes = std::max(params.vector_lanes, 1);
      axes.push_back({st.name, a->name, a->extent, 2, true, std::max<std::int64_t>(lanes * 4, 4),
                      lanes, params.tail_tiles, lanes});
    }
    if (const auto* p = std::get_if<SimplePlan>(&plan); p && !p->in_rows)
      add_tile_axes(axes, scheduled_stage(dag, p->stage), 2, "", params.max_innermost_factor,
                    params);
    if (const auto* p = std::get_if<SimplePlan>(&plan); p && p->in_rows) {
      // A row at a time: only its last axis is tiled (and vectorized).
      ir::Stage row = scheduled_stage(dag, p->stage);
      row.axes.erase(row.axes.begin(), row.axes.end() - 1);
      add_tile_axes(axes, row, 2, "", params.max_innermost_factor, params);
    }
    if (const auto* p = std::get_if<RowsPlan>(&plan))
      add_tile_axes(axes, scheduled_stage(dag, p->stage), 2, "", params.max_innermost_factor,
                    params);
  }
  return axes;
}

SketchSpace::SketchSpace(const ir::ComputeDAG& dag, const SpaceParams& params)
    : dag_(dag), params_(params) {
  for (Draft& d : derive_drafts(Analysis(dag))) {
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
