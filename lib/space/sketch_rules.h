// The sketch rules: one small type per rule, tried in the order of one list
// (TVM's sketch_policy_rules.h).
//
// The derivation walks the stages from the output back to the inputs. At
// each stage, every draft (a sketch so far) meets the rules in list order.
// A rule's condition on (draft, stage) is Skip (try the next rule), Apply
// (the drafts its apply returns go on, and so does the walk down the list)
// or ApplyAndSkipRest (its drafts go on, and the rest of the list is not
// tried). A draft no rule applies to would be dropped: some rule must take
// every stage. The drafts of a stage come out draft by draft, each draft's
// rule by rule; a sketch's number is its place in the final order, and
// tuning logs store it.
//
// Adding a rule:
//  1. Declare a struct below with `condition` and `apply` as SketchRule
//     requires, and define them in sketch_rules.cpp; what it must know of
//     the DAG goes in Analysis (sketch_analysis.h).
//  2. Add one line for it to kSketchRules, where it must be tried. A rule
//     that adds sketches for stages that already get some goes after the
//     rules that make those, so that they keep their numbers.
//  3. A new kind of plan: a struct in include/kiln/space/stage_plan.h added
//     to StagePlan; the compiler then points at the std::visit calls that
//     must handle it (its steps in sketch_steps.cpp), and tile_axes in
//     sketch.cpp gives it its tile decisions.
//  4. Test the sketch names it derives in test/unit/space/sketch_test.cpp.
//     If the spaces of ops/ change, update test/e2e/space_fingerprint.inc
//     and say why in the commit.
#ifndef KILN_LIB_SPACE_SKETCH_RULES_H
#define KILN_LIB_SPACE_SKETCH_RULES_H

#include "sketch_analysis.h"

#include "kiln/space/stage_plan.h"

#include <concepts>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace kiln::space {

/// What a rule does with a draft at a stage (TVM's ConditionKind).
enum class Condition : std::uint8_t { Skip, Apply, ApplyAndSkipRest };

/// The choices so far of one sketch being derived.
struct Draft {
  std::vector<StagePlan> plans; ///< in the order the rules added them
  std::string name;             ///< the rules' tags, joined by ", "
};

/// The stage the rules are asked about, and what they may read of the DAG.
struct StageContext {
  const Analysis& analysis;
  int index; ///< in the DAG

  const ir::ComputeDAG& dag() const { return analysis.dag(); }
  const ir::Stage& stage() const { return analysis.dag().stage(index); }
};

/// A rule: a condition on a draft at a stage, and the drafts it makes.
template <typename R>
concept SketchRule = requires(const R& rule, const Draft& draft, const StageContext& stage) {
  { rule.condition(draft, stage) } -> std::same_as<Condition>;
  { rule.apply(draft, stage) } -> std::same_as<std::vector<Draft>>;
};

/// Placeholders have no schedule: the draft goes on unchanged.
struct SkipPlaceholder {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// An always-inlined stage (an element-wise stage that is not an output,
/// has no reduction and calls no function) that a level-1 cache-write
/// register tile of the draft reads only through broadcasts (a
/// weight-vectorized conv's padded data, a channel-blocked conv's): inlined,
/// its select would run once per broadcast, so it stays a stage (RootPlan),
/// computed inside each tile.
struct ComputeInsideBroadcastTile {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// Any other always-inlined stage is inlined.
struct AlwaysInline {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A stage with data reuse (a reduction that some input reads without one
/// of its spatial axes: matmul, conv, batch matmul) whose only consumer
/// reads it element-wise: tiled, its outer levels on that consumer, and
/// computed at the consumer's tile at level 1 or 2 (two drafts); when the
/// Rfactor rule applies to it (an operand read once: a batch-1 dense
/// layer's weight), that rule's draft too. No other tiling of the stage is
/// tried.
struct MultiLevelTilingWithFusion {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A stage with data reuse accumulates into `<stage>.local`, tiled and
/// computed at level 1 or 2 of the copy (two drafts).
struct MultiLevelTilingWithCacheWrite {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A stage with data reuse tiled in place.
struct MultiLevelTilingInPlace {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A stage with data reuse that reads an input directly, without one
/// spatial axis but with the last one (B[k, j] of C[i, j] = sum A[i, k]
/// B[k, j]): level 1 with a cache write, plus a cache_read of that input at
/// the middle tile level, that level ordered with the input's axes
/// outermost (the packed panels of OpenBLAS; Ansor's CPU rules have no such
/// step).
struct MultiLevelTilingPacked {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A stage with data reuse and no input to pack, whose weights (an input
/// read along a spatial axis other than the last, without the last) are
/// the only input read along that axis (k of C[k, y, x] = sum P[c, y+r,
/// x+s] * W[k, c, r, s]): level 1 with a cache write, vectorized along that
/// axis, the weights copied at the root by a cache_read stored with the
/// axis innermost (oneDNN's blocked convolutions; Ansor gets there by
/// rewriting the weight layout).
struct MultiLevelTilingWeightVectorized {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A consumer that holds the outer tiles of a stage fused into it already
/// has its plan: the draft goes on unchanged.
struct SkipFusedConsumer {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// Every other computed stage (also reductions without reuse such as row
/// sums and softmax): a simple tiling.
struct SimpleTiling {
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// A reduction without reuse, or whose operand read along the axis is read
/// once, whose last reduction axis is long and read along memory
/// (Analysis::rfactor_axis): also factored by rfactor
/// (RfactorPlan), a draft after the simple tiling's, so the sketches
/// without it keep their numbers.
struct Rfactor {
  /// Shorter reductions gain nothing from vectors of partial results.
  static constexpr std::int64_t kMinExtent = 64;
  Condition condition(const Draft& draft, const StageContext& stage) const;
  std::vector<Draft> apply(const Draft& draft, const StageContext& stage) const;
};

/// The rules, in the order they are tried.
inline constexpr std::tuple kSketchRules{
    SkipPlaceholder{},
    ComputeInsideBroadcastTile{},
    AlwaysInline{},
    MultiLevelTilingWithFusion{},
    MultiLevelTilingWithCacheWrite{},
    MultiLevelTilingInPlace{},
    MultiLevelTilingPacked{},
    MultiLevelTilingWeightVectorized{},
    SkipFusedConsumer{},
    SimpleTiling{},
    Rfactor{},
};

/// The drafts of every sketch of the analysed DAG, in sketch order: the
/// walk's, then, for a row-wise DAG (Analysis::rows_fusable), a twin of
/// each draft whose reductions are all rfactored with every stage computed
/// at the output's row loop (RowsPlan). That choice needs the plans of all
/// stages, so it is not a rule of the walk.
std::vector<Draft> derive_drafts(const Analysis& analysis);

} // namespace kiln::space

#endif // KILN_LIB_SPACE_SKETCH_RULES_H
