// The steps of a filled config: the structure steps every config shares,
// then each plan's steps, written by one function per plan kind.
#include "kiln/space/sketch.h"
#include "kiln/support/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kiln::space {

using schedule::Annotation;
using schedule::Step;

namespace {

/// Appends the steps of one config, reading the factors it chose.
class StepWriter {
public:
  StepWriter(const Sketch& sketch, const SketchConfig& config, std::vector<Step>& out)
      : sketch_(sketch), config_(config), out_(out) {}

  /// The factors chosen for axis `axis` of stage `stage`.
  const std::vector<std::int64_t>& factors(const std::string& stage, const std::string& axis) {
    const std::vector<TileAxis>& axes = sketch_.axes();
    auto it = std::find_if(axes.begin(), axes.end(),
                           [&](const TileAxis& a) { return a.stage == stage && a.axis == axis; });
    KILN_ASSERT(it != axes.end(),
                "a plan's steps read only its sketch's tile axes: " + stage + "." + axis);
    return config_.tiles.at(it - axes.begin());
  }

  void step(Step s) { out_.push_back(std::move(s)); }

  void split(const std::string& stage, const std::string& iter, std::vector<std::int64_t> inner) {
    step(schedule::SplitStep{stage, iter, std::move(inner)});
  }

  /// Fuses the first `k` names (k >= 2) and returns the loop list with the
  /// fused name in their place.
  std::vector<std::string> fuse_prefix(const std::string& stage, std::vector<std::string> loops,
                                       int k) {
    if (k < 2)
      return loops;
    std::vector<std::string> parts(loops.begin(), loops.begin() + k);
    std::string fused = fmt::format("{}", fmt::join(parts, "@"));
    step(schedule::FuseStep{stage, parts});
    loops.erase(loops.begin(), loops.begin() + k);
    loops.insert(loops.begin(), fused);
    return loops;
  }

  void annotate(const std::string& stage, const std::string& iter, Annotation a) {
    step(schedule::AnnotateStep{stage, iter, a});
  }

  void pragma(const std::string& stage, std::int64_t value) {
    if (value > 0)
      step(schedule::PragmaStep{stage, value});
  }

private:
  const Sketch& sketch_;
  const SketchConfig& config_;
  std::vector<Step>& out_;
};

/// One plan's open decisions: its stage's tile axes (spatial and reduction,
/// in the sketch's order) and its annotations.
struct PlanDecisions {
  std::vector<const TileAxis*> spatial, reduce;
  int parallel = 0;
  std::int64_t unroll = 0;
};

template <typename... Fs> struct Overloaded : Fs... { using Fs::operator()...; };

} // namespace

static std::int64_t product(const std::vector<std::int64_t>& v, size_t from, size_t to) {
  std::int64_t p = 1;
  for (size_t i = from; i < to; ++i)
    p *= v[i];
  return p;
}

/// The loop name's axis: `i` of `i.2`.
static std::string axis_of(const std::string& loop) {
  return loop.substr(0, loop.rfind('.'));
}

/// Orders the register tile's loops (`loops`, of axes split into `.N`) to
/// keep the fewest values live: the axes the broadcast operands read
/// outside, the others, read only by the vector operands, inside them and
/// the vectorized axis innermost. Each broadcast element then feeds its
/// FMAs as soon as it is loaded, while the few vectors stay in registers
/// across the tile. In the op's axis order, conv2d_nchwc's output-channel
/// block would run outside its x, keeping a row of broadcasts live beside
/// the accumulators, which then spill.
static void order_register_tile(std::vector<std::string>& loops, const MultiLevelPlan& p,
                                const std::string& vector_loop) {
  std::stable_partition(loops.begin(), loops.end(), [&](const std::string& loop) {
    return std::find(p.broadcast_axes.begin(), p.broadcast_axes.end(), axis_of(loop)) !=
           p.broadcast_axes.end();
  });
  std::stable_partition(loops.begin(), loops.end(),
                        [&](const std::string& loop) { return loop != vector_loop; });
}

/// A simple plan computed at a row loop: its last axis split, the inner
/// part vectorized.
static void simple_in_rows_steps(StepWriter& w, const SimplePlan& p, const PlanDecisions& d) {
  KILN_ASSERT(d.spatial.size() == 1, "a stage in rows tiles its last axis alone");
  const TileAxis* a = d.spatial.front();
  const std::int64_t inner = w.factors(a->stage, a->axis)[1];
  w.split(p.stage, a->axis, {inner});
  if (inner > 1)
    w.annotate(p.stage, a->axis + ".1", Annotation::Vectorize);
}

static void simple_steps(StepWriter& w, const SimplePlan& p, const PlanDecisions& d) {
  if (p.in_rows)
    return simple_in_rows_steps(w, p, d);
  std::vector<std::string> outer, inner, red;
  for (const TileAxis* a : d.spatial) {
    const auto& f = w.factors(a->stage, a->axis);
    w.split(p.stage, a->axis, {f[1]});
    outer.push_back(a->axis + ".0");
    inner.push_back(a->axis + ".1");
  }
  for (const TileAxis* a : d.reduce)
    red.push_back(a->axis);
  std::vector<std::string> order = outer;
  order.insert(order.end(), red.begin(), red.end());
  order.insert(order.end(), inner.begin(), inner.end());
  w.step(schedule::ReorderStep{p.stage, order});
  std::vector<std::string> loops = w.fuse_prefix(p.stage, outer, d.parallel);
  if (d.parallel > 0)
    w.annotate(p.stage, loops[0], Annotation::Parallel);
  if (!d.spatial.empty() && w.factors(p.stage, d.spatial.back()->axis)[1] > 1)
    w.annotate(p.stage, inner.back(), Annotation::Vectorize);
  if (!d.reduce.empty())
    w.pragma(p.stage, d.unroll);
}

/// A root plan at the root: every axis but the last fused and parallel (one
/// task per row, and on one core the loop simply runs), the last maybe
/// vectorized.
static void root_steps(StepWriter& w, const RootPlan& p) {
  std::vector<std::string> loops = p.axes;
  if (loops.size() < 2)
    return;
  std::string last = loops.back();
  loops = w.fuse_prefix(p.stage, loops, static_cast<int>(loops.size()) - 1);
  w.annotate(p.stage, loops.front(), Annotation::Parallel);
  if (p.vectorize)
    w.annotate(p.stage, last, Annotation::Vectorize);
}

/// A root plan inside each tile of `tiled`, at its outermost loop `at`.
static void root_inside_steps(StepWriter& w, const RootPlan& p, const std::string& tiled,
                              const std::string& at) {
  w.step(schedule::ComputeAtStep{p.stage, tiled, at});
  if (p.vectorize)
    w.annotate(p.stage, p.axes.back(), Annotation::Vectorize);
}

/// An rfactor of the plan's axis by the chosen factor, `<stage>.rf` ordered
/// spatial, other reductions, `<axis>.o`, `<axis>.r`: the partials'
/// vector innermost, its spatial loops fused and parallel. A factor of 1
/// (an axis too short for a whole vector, no tails) leaves the stage as it
/// is.
static void rfactor_steps(StepWriter& w, const RfactorPlan& p, const PlanDecisions& d) {
  const std::int64_t factor = w.factors(p.stage, p.axis).back();
  if (factor < 2)
    return;
  w.step(schedule::RfactorStep{p.stage, p.axis, factor});
  const std::string rf = p.stage + ".rf";
  std::vector<std::string> order = p.spatial_axes;
  order.insert(order.end(), p.other_reduce_axes.begin(), p.other_reduce_axes.end());
  order.push_back(p.axis + ".o");
  order.push_back(p.axis + ".r");
  w.step(schedule::ReorderStep{rf, order});
  if (!p.in_rows) {
    std::vector<std::string> loops =
        w.fuse_prefix(rf, p.spatial_axes, static_cast<int>(p.spatial_axes.size()));
    if (!loops.empty())
      w.annotate(rf, loops.front(), Annotation::Parallel);
  }
  w.annotate(rf, p.axis + ".r", Annotation::Vectorize);
  w.pragma(rf, d.unroll);
}

/// The output of fused row operations: rows in 2 levels (the outer
/// parallel), the last axis in 2 (the inner vectorized), and every member
/// computed at the inner row loop, readers first (a stage is computed at a
/// loop once all its readers are there: docs/schedule-format.md).
static void rows_steps(StepWriter& w, const RowsPlan& p, const PlanDecisions& d) {
  KILN_ASSERT(d.spatial.size() == 2, "a row plan's output has rows and columns");
  const std::string rows = d.spatial[0]->axis, cols = d.spatial[1]->axis;
  const std::int64_t vector = w.factors(p.stage, cols)[1];
  w.split(p.stage, rows, {w.factors(p.stage, rows)[1]});
  w.split(p.stage, cols, {vector});
  w.step(schedule::ReorderStep{p.stage, {rows + ".0", rows + ".1", cols + ".0", cols + ".1"}});
  if (d.parallel > 0)
    w.annotate(p.stage, rows + ".0", Annotation::Parallel);
  if (vector > 1)
    w.annotate(p.stage, cols + ".1", Annotation::Vectorize);
  const std::string at = rows + ".1";
  for (auto m = p.members.rbegin(); m != p.members.rend(); ++m) {
    w.step(schedule::ComputeAtStep{m->stage, p.stage, at});
    // rfactor_steps leaves a factor below 2 without its .rf stage.
    if (!m->rfactor_axis.empty() && w.factors(m->stage, m->rfactor_axis).back() >= 2)
      w.step(schedule::ComputeAtStep{m->stage + ".rf", p.stage, at});
  }
}

/// A multi-level tiling in place: S0 S1 R0 S2 R1 S3.
static void multi_level_in_place_steps(StepWriter& w, const MultiLevelPlan& p,
                                       const PlanDecisions& d) {
  const std::string& t = p.tiled;
  std::vector<std::vector<std::string>> levels(6);
  for (const TileAxis* a : d.spatial) {
    const auto& f = w.factors(a->stage, a->axis);
    w.split(t, a->axis, {f[1], f[2], f[3]});
    for (int l = 0; l < 4; ++l)
      levels[l == 0 ? 0 : l == 1 ? 1 : l == 2 ? 3 : 5].push_back(fmt::format("{}.{}", a->axis, l));
  }
  for (const TileAxis* a : d.reduce) {
    w.split(t, a->axis, {w.factors(a->stage, a->axis)[1]});
    levels[2].push_back(a->axis + ".0");
    levels[4].push_back(a->axis + ".1");
  }
  order_register_tile(levels[5], p, d.spatial.back()->axis + ".3");
  std::vector<std::string> order;
  for (const auto& l : levels)
    order.insert(order.end(), l.begin(), l.end());
  w.step(schedule::ReorderStep{t, order});
  std::vector<std::string> loops = w.fuse_prefix(t, levels[0], d.parallel);
  if (d.parallel > 0)
    w.annotate(t, loops[0], Annotation::Parallel);
  if (w.factors(p.stage, d.spatial.back()->axis)[3] > 1)
    w.annotate(t, levels[5].back(), Annotation::Vectorize);
  w.pragma(t, d.unroll);
}

/// Moves the packed input's axes outermost in the middle spatial level
/// (`middle`), so its panel is copied once per block of them and reused by
/// the others. Returns the loop the panel is copied at: the innermost of
/// them (empty if none).
static std::string order_for_packing(std::vector<std::string>& middle, const Packing& packing) {
  auto is_pack_axis = [&](const std::string& loop) {
    return std::find(packing.axes.begin(), packing.axes.end(), axis_of(loop)) != packing.axes.end();
  };
  std::stable_partition(middle.begin(), middle.end(), is_pack_axis);
  std::string at;
  for (const std::string& loop : middle)
    if (is_pack_axis(loop))
      at = loop;
  return at;
}

/// The packed copy of the input, computed in `tiled` at loop `at`, its
/// innermost axis vectorized.
static void packing_steps(StepWriter& w, const Packing& packing, const std::string& tiled,
                          const std::string& at) {
  w.step(schedule::CacheReadStep{packing.input, tiled});
  w.step(schedule::ComputeAtStep{packing.input + ".cache", tiled, at});
  w.annotate(packing.input + ".cache", packing.inner, Annotation::Vectorize);
}

/// A multi-level tiling whose outer levels are on another stage (the
/// consumer, or the cache-write copy), the inner ones on the tiled stage,
/// computed at the end of level `level`; then the stages computed inside
/// its tiles (`plans`' root plans inside it, its packed input).
static void multi_level_outer_steps(StepWriter& w, const MultiLevelPlan& p, const PlanDecisions& d,
                                    const std::vector<StagePlan>& plans) {
  const std::string& t = p.tiled;
  const std::string& o = p.outer;
  const auto& spatial = d.spatial;
  std::vector<std::vector<std::string>> outer_levels(p.level + 1);
  for (size_t i = 0; i < spatial.size(); ++i) {
    const auto& f = w.factors(spatial[i]->stage, spatial[i]->axis);
    const std::string& axis = p.outer_axes.at(i);
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
  w.step(schedule::ReorderStep{o, order});
  std::vector<std::string> level0 = w.fuse_prefix(o, outer_levels[0], d.parallel);
  if (d.parallel > 0)
    w.annotate(o, level0[0], Annotation::Parallel);
  std::string attach = p.level == 1 ? level0.back() : outer_levels[1].back();
  // The copy-out vectorizes the last axis; under weight vectorization its
  // whole tile, which the register tile no longer walks in vectors.
  const auto& last = w.factors(p.stage, spatial.back()->axis);
  if ((p.weight_vectorization ? product(last, p.level, 4) : last[3]) > 1)
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
  for (const TileAxis* a : d.reduce) {
    w.split(t, a->axis, {w.factors(a->stage, a->axis)[1]});
    levels[1].push_back(a->axis + ".0");
    levels[3].push_back(a->axis + ".1");
  }
  std::string pack_at = p.packing ? order_for_packing(levels[2], *p.packing) : "";
  const std::string vector_axis =
      p.weight_vectorization ? p.weight_vectorization->axis : spatial.back()->axis;
  order_register_tile(levels[4], p, vector_axis + (p.level == 1 ? ".2" : ".1"));
  std::vector<std::string> inner_order;
  for (const auto& l : levels)
    inner_order.insert(inner_order.end(), l.begin(), l.end());
  w.step(schedule::ReorderStep{t, inner_order});
  w.step(schedule::ComputeAtStep{t, o, attach});
  if (w.factors(p.stage, vector_axis)[3] > 1)
    w.annotate(t, levels[4].back(), Annotation::Vectorize);
  w.pragma(t, d.unroll);
  for (const StagePlan& q : plans)
    if (const auto* root = std::get_if<RootPlan>(&q); root && root->inside == t)
      root_inside_steps(w, *root, t, inner_order.front());
  if (!pack_at.empty())
    packing_steps(w, *p.packing, t, pack_at);
}

std::vector<Step> Sketch::structure_steps() const {
  std::vector<Step> out;
  for (const StagePlan& p : plans_)
    if (const auto* inl = std::get_if<InlinePlan>(&p))
      out.push_back(schedule::ComputeInlineStep{inl->stage});
  for (const StagePlan& p : plans_)
    if (const auto* ml = std::get_if<MultiLevelPlan>(&p); ml && ml->cache_write)
      out.push_back(schedule::CacheWriteStep{ml->stage});
  for (const StagePlan& p : plans_)
    if (const auto* ml = std::get_if<MultiLevelPlan>(&p); ml && ml->weight_vectorization)
      out.push_back(schedule::CacheReadStep{ml->weight_vectorization->weights, ml->tiled});
  return out;
}

std::vector<Step> Sketch::steps(const SketchConfig& config) const {
  std::vector<Step> out = structure_steps();
  StepWriter w(*this, config, out);
  for (size_t pi = 0; pi < plans_.size(); ++pi) {
    const StagePlan& plan = plans_[pi];
    PlanDecisions d;
    d.parallel = config.parallel.at(pi);
    d.unroll = config.unroll.at(pi);
    for (const TileAxis& a : axes_)
      if (a.stage == stage_of(plan))
        (a.reduce ? d.reduce : d.spatial).push_back(&a);
    std::visit(Overloaded{
                   // Inlined by the structure steps.
                   [](const InlinePlan&) {},
                   // Its loops are written by the stage fused into it.
                   [](const OuterPlan&) {},
                   [&](const SimplePlan& p) { simple_steps(w, p, d); },
                   [&](const RfactorPlan& p) { rfactor_steps(w, p, d); },
                   [&](const RowsPlan& p) { rows_steps(w, p, d); },
                   [&](const RootPlan& p) {
                     if (p.inside.empty())
                       root_steps(w, p);
                     // Else its steps follow its tiled stage's.
                   },
                   [&](const MultiLevelPlan& p) {
                     if (p.outer.empty())
                       multi_level_in_place_steps(w, p, d);
                     else
                       multi_level_outer_steps(w, p, d, plans_);
                   },
               },
               plan);
  }
  return out;
}

} // namespace kiln::space
