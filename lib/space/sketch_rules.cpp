#include "sketch_rules.h"

#include "kiln/support/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::space {

/// The draft with one more plan.
static Draft with_plan(Draft draft, StagePlan plan) {
  draft.plans.push_back(std::move(plan));
  return draft;
}

/// The draft with a multi-level tiling of the stage, its broadcast axes
/// filled in, and `tag` added to its name.
static Draft with_tiling(Draft draft, MultiLevelPlan plan, const std::string& tag,
                         const StageContext& stage) {
  plan.broadcast_axes = stage.analysis.broadcast_axes(
      stage.index,
      plan.weight_vectorization ? plan.weight_vectorization->axis : stage.stage().axes.back().name);
  draft.plans.push_back(std::move(plan));
  draft.name += (draft.name.empty() ? "" : ", ") + tag;
  return draft;
}

static std::vector<std::string> axis_names(const ir::Stage& stage) {
  std::vector<std::string> out;
  for (const ir::IterVar& a : stage.axes)
    out.push_back(a.name);
  return out;
}

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

/// The stage accumulated in `<stage>.local`, computed at `level` of the copy.
static MultiLevelPlan with_cache_write(const ir::Stage& stage, int level) {
  return multi_level(stage.name, stage.name + ".local", stage.name, axis_names(stage), true, level);
}

static RootPlan root_plan(const ir::Stage& stage, bool vectorize) {
  RootPlan p;
  p.stage = stage.name;
  p.axes = axis_names(stage);
  p.vectorize = vectorize;
  return p;
}

static bool reuses_data(const StageContext& stage) {
  return stage.analysis.has_data_reuse(stage.index);
}

/// The draft's level-1 cache-write tiling of a reader of the stage that
/// reads it only through broadcasts; null if none.
static const MultiLevelPlan* broadcasting_tile(const Draft& draft, const StageContext& stage) {
  const ir::ComputeDAG& dag = stage.dag();
  const std::vector<int> readers = dag.consumers(stage.index);
  for (const StagePlan& plan : draft.plans) {
    const auto* q = std::get_if<MultiLevelPlan>(&plan);
    if (!q || !q->cache_write || q->level != 1)
      continue;
    const int reader = dag.find_stage(q->stage);
    if (std::find(readers.begin(), readers.end(), reader) == readers.end())
      continue;
    if (stage.analysis.broadcast_only(reader, stage.stage().name,
                                      q->weight_vectorization ? q->weight_vectorization->axis : ""))
      return q;
  }
  return nullptr;
}

Condition SkipPlaceholder::condition(const Draft&, const StageContext& stage) const {
  return stage.stage().is_placeholder() ? Condition::ApplyAndSkipRest : Condition::Skip;
}

std::vector<Draft> SkipPlaceholder::apply(const Draft& draft, const StageContext&) const {
  return {draft};
}

Condition ComputeInsideBroadcastTile::condition(const Draft& draft,
                                                const StageContext& stage) const {
  return stage.analysis.inlined(stage.stage().name) && broadcasting_tile(draft, stage)
             ? Condition::ApplyAndSkipRest
             : Condition::Skip;
}

std::vector<Draft> ComputeInsideBroadcastTile::apply(const Draft& draft,
                                                     const StageContext& stage) const {
  RootPlan data = root_plan(stage.stage(), true);
  data.inside = broadcasting_tile(draft, stage)->tiled;
  return {with_plan(draft, std::move(data))};
}

Condition AlwaysInline::condition(const Draft&, const StageContext& stage) const {
  return stage.analysis.inlined(stage.stage().name) ? Condition::ApplyAndSkipRest : Condition::Skip;
}

std::vector<Draft> AlwaysInline::apply(const Draft& draft, const StageContext& stage) const {
  return {with_plan(draft, InlinePlan{stage.stage().name})};
}

Condition MultiLevelTilingWithFusion::condition(const Draft&, const StageContext& stage) const {
  return reuses_data(stage) && stage.analysis.elementwise_consumer(stage.index) >= 0
             ? Condition::ApplyAndSkipRest
             : Condition::Skip;
}

std::vector<Draft> MultiLevelTilingWithFusion::apply(const Draft& draft,
                                                     const StageContext& stage) const {
  const ir::Stage& s = stage.stage();
  const ir::Stage& c = stage.dag().stage(stage.analysis.elementwise_consumer(stage.index));
  std::vector<Draft> out;
  for (int level : {1, 2}) {
    Draft v = with_tiling(draft, multi_level(s.name, s.name, c.name, axis_names(c), false, level),
                          fmt::format("{} tiled, fused into {} at level {}", s.name, c.name, level),
                          stage);
    // The consumer's own (simple) plan gives way to the fused tiling.
    std::erase_if(v.plans, [&](const StagePlan& q) { return stage_of(q) == c.name; });
    v.plans.push_back(OuterPlan{c.name});
    out.push_back(std::move(v));
  }
  // A batch-1 dense layer streams its weight once: factored along the
  // weight's rows it reads them in vectors, the consumer tiled on its own.
  if (Rfactor{}.condition(draft, stage) != Condition::Skip)
    for (Draft& d : Rfactor{}.apply(draft, stage))
      out.push_back(std::move(d));
  return out;
}

Condition MultiLevelTilingWithCacheWrite::condition(const Draft&, const StageContext& stage) const {
  // After the fusion rule, which takes the stages it applies to.
  return reuses_data(stage) ? Condition::Apply : Condition::Skip;
}

std::vector<Draft> MultiLevelTilingWithCacheWrite::apply(const Draft& draft,
                                                         const StageContext& stage) const {
  const ir::Stage& s = stage.stage();
  std::vector<Draft> out;
  for (int level : {1, 2})
    out.push_back(
        with_tiling(draft, with_cache_write(s, level),
                    fmt::format("{} tiled in {}.local at level {}", s.name, s.name, level), stage));
  return out;
}

Condition MultiLevelTilingInPlace::condition(const Draft&, const StageContext& stage) const {
  return reuses_data(stage) ? Condition::Apply : Condition::Skip;
}

std::vector<Draft> MultiLevelTilingInPlace::apply(const Draft& draft,
                                                  const StageContext& stage) const {
  const std::string& name = stage.stage().name;
  return {with_tiling(draft, multi_level(name, name, "", {}, false, 0),
                      fmt::format("{} tiled in place", name), stage)};
}

Condition MultiLevelTilingPacked::condition(const Draft&, const StageContext& stage) const {
  return reuses_data(stage) && stage.analysis.packable_input(stage.index) ? Condition::Apply
                                                                          : Condition::Skip;
}

std::vector<Draft> MultiLevelTilingPacked::apply(const Draft& draft,
                                                 const StageContext& stage) const {
  const ir::Stage& s = stage.stage();
  PackableInput packable = *stage.analysis.packable_input(stage.index);
  const ir::Stage& input = stage.dag().stage(stage.dag().find_stage(packable.input));
  MultiLevelPlan plan = with_cache_write(s, 1);
  plan.packing = Packing{packable.input, packable.axes, fmt::format("ax{}", input.axes.size() - 1)};
  return {with_tiling(
      draft, std::move(plan),
      fmt::format("{} tiled in {}.local at level 1, {} packed", s.name, s.name, packable.input),
      stage)};
}

Condition MultiLevelTilingWeightVectorized::condition(const Draft&,
                                                      const StageContext& stage) const {
  return reuses_data(stage) && !stage.analysis.packable_input(stage.index) &&
                 stage.analysis.vectorizable_weights(stage.index)
             ? Condition::Apply
             : Condition::Skip;
}

std::vector<Draft> MultiLevelTilingWeightVectorized::apply(const Draft& draft,
                                                           const StageContext& stage) const {
  const ir::Stage& s = stage.stage();
  VectorizableWeights w = *stage.analysis.vectorizable_weights(stage.index);
  MultiLevelPlan plan = with_cache_write(s, 1);
  plan.weight_vectorization = WeightVectorization{w.axis, w.weights};
  Draft v = with_tiling(draft, std::move(plan),
                        fmt::format("{} tiled in {}.local at level 1, vectorized over {}, {} "
                                    "copied with {} innermost",
                                    s.name, s.name, w.axis, w.weights, w.axis),
                        stage);
  // Stored with the vectorized axis innermost, the copy's last axis would
  // be a scatter: not vectorized.
  v.plans.push_back(root_plan(scheduled_stage(stage.dag(), w.weights + ".cache"), false));
  return {v};
}

Condition SkipFusedConsumer::condition(const Draft& draft, const StageContext& stage) const {
  const std::string& name = stage.stage().name;
  return std::any_of(draft.plans.begin(), draft.plans.end(),
                     [&](const StagePlan& q) {
                       return std::holds_alternative<OuterPlan>(q) && stage_of(q) == name;
                     })
             ? Condition::ApplyAndSkipRest
             : Condition::Skip;
}

std::vector<Draft> SkipFusedConsumer::apply(const Draft& draft, const StageContext&) const {
  return {draft};
}

Condition SimpleTiling::condition(const Draft&, const StageContext& stage) const {
  // The multi-level rules apply without skipping the rest (each adds its
  // drafts): their stages are not tiled simply as well.
  // The rfactor rule after it adds its draft; nothing else follows.
  return reuses_data(stage) ? Condition::Skip : Condition::Apply;
}

std::vector<Draft> SimpleTiling::apply(const Draft& draft, const StageContext& stage) const {
  return {with_plan(draft, SimplePlan{stage.stage().name})};
}

Condition Rfactor::condition(const Draft&, const StageContext& stage) const {
  return stage.analysis.rfactor_axis(stage.index, kMinExtent).empty() ? Condition::Skip
                                                                      : Condition::Apply;
}

std::vector<Draft> Rfactor::apply(const Draft& draft, const StageContext& stage) const {
  RfactorPlan plan{stage.stage().name,
                   stage.analysis.rfactor_axis(stage.index, kMinExtent),
                   axis_names(stage.stage()),
                   {}};
  for (const ir::IterVar& a : stage.stage().reduction()->axes)
    if (a.name != plan.axis)
      plan.other_reduce_axes.push_back(a.name);
  Draft d = with_plan(draft, plan);
  d.name +=
      fmt::format("{}{} rfactored along {}", d.name.empty() ? "" : ", ", plan.stage, plan.axis);
  return {d};
}

/// Tries one rule on a draft: the drafts it makes go to `next`, and
/// `taken` is set when it applies. True when the rest of the list is skipped.
static bool try_rule(const SketchRule auto& rule, const Draft& draft, const StageContext& stage,
                     std::vector<Draft>& next, bool& taken) {
  const Condition condition = rule.condition(draft, stage);
  if (condition == Condition::Skip)
    return false;
  for (Draft& d : rule.apply(draft, stage))
    next.push_back(std::move(d));
  taken = true;
  return condition == Condition::ApplyAndSkipRest;
}

/// The drafts of the walk from the output back to the inputs, every rule
/// tried at every stage.
static std::vector<Draft> derive_stage_drafts(const Analysis& analysis);

/// The draft with its row stages computed at the output's row loop, or
/// nothing: every stage but the output must be inlined or tiled simply,
/// and every reduction rfactored (a scalar reduction per row is the slow
/// sketch already).
static std::optional<Draft> fused_rows(const Draft& draft, const ir::ComputeDAG& dag,
                                       const std::string& output) {
  Draft twin = draft;
  RowsPlan rows{output, {}};
  for (StagePlan& plan : twin.plans) {
    const ir::Stage& s = dag.stage(dag.find_stage(stage_of(plan)));
    if (s.name == output) {
      if (!std::holds_alternative<SimplePlan>(plan))
        return std::nullopt;
      continue;
    }
    if (std::holds_alternative<InlinePlan>(plan))
      continue;
    if (auto* simple = std::get_if<SimplePlan>(&plan); simple && !s.reduction()) {
      simple->in_rows = true;
      rows.members.push_back({s.name, ""});
    } else if (auto* rf = std::get_if<RfactorPlan>(&plan)) {
      rf->in_rows = true;
      rows.members.push_back({s.name, rf->axis});
    } else {
      return std::nullopt;
    }
  }
  std::sort(rows.members.begin(), rows.members.end(),
            [&](const RowsPlan::Member& a, const RowsPlan::Member& b) {
              return dag.find_stage(a.stage) < dag.find_stage(b.stage);
            });
  for (StagePlan& plan : twin.plans)
    if (stage_of(plan) == output)
      plan = rows;
  twin.name += fmt::format(", rows fused at {}", output);
  return twin;
}

std::vector<Draft> derive_drafts(const Analysis& analysis) {
  std::vector<Draft> drafts = derive_stage_drafts(analysis);
  // Fusing the row stages needs every stage's plan, so it follows the walk;
  // its drafts go last, and the others keep their numbers.
  const std::vector<int> args = analysis.dag().arguments();
  const int output = args.back();
  if (!analysis.rows_fusable(output))
    return drafts;
  const size_t walked = drafts.size();
  for (size_t i = 0; i < walked; ++i)
    if (auto twin = fused_rows(drafts[i], analysis.dag(), analysis.dag().stage(output).name))
      drafts.push_back(std::move(*twin));
  return drafts;
}

static std::vector<Draft> derive_stage_drafts(const Analysis& analysis) {
  std::vector<Draft> drafts{Draft{}};
  for (int i = static_cast<int>(analysis.dag().stages().size()); i-- > 0;) {
    const StageContext stage{analysis, i};
    std::vector<Draft> next;
    for (const Draft& draft : drafts) {
      bool taken = false;
      std::apply([&](const auto&... rule) { (try_rule(rule, draft, stage, next, taken) || ...); },
                 kSketchRules);
      KILN_ASSERT(taken, "some rule must take every stage, and none took " + stage.stage().name);
    }
    drafts = std::move(next);
  }
  return drafts;
}

} // namespace kiln::space
