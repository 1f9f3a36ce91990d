// What a sketch does with one stage: one of a closed set of plan kinds, each
// carrying only its own fields. The rules that choose them are in
// lib/space/sketch_rules.h; the steps each kind writes, in
// lib/space/sketch_steps.cpp.
#ifndef KILN_SPACE_STAGE_PLAN_H
#define KILN_SPACE_STAGE_PLAN_H

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::space {

/// Inlined into its consumers (an element-wise stage that is not an
/// output, has no reduction and calls no function: padding, bias add).
struct InlinePlan {
  std::string stage;
};

/// Simple tiling: each spatial axis in 2 levels, the outer spatial loops,
/// then the reduction loops, then the inner spatial loops; the outer ones
/// fused and parallel, the innermost vectorized.
struct SimplePlan {
  std::string stage;
  /// Computed at the row loop of a RowsPlan instead: only its last axis
  /// is tiled (2 levels, the inner vectorized), nothing is parallel.
  bool in_rows = false;
};

/// An element-wise consumer whose loops hold the outer tile levels of the
/// stage fused into it: the MultiLevelPlan whose `outer` it is writes its
/// steps.
struct OuterPlan {
  std::string stage;
};

/// Computed with fixed annotations and no open decision: the weights copy
/// of a weight-vectorized sketch, and an inlined stage that a register tile
/// only broadcasts. A decision there would change little and would dilute
/// the search of the register tile.
struct RootPlan {
  std::string stage;
  /// The stage's axes: all but the last fused and parallel at the root.
  std::vector<std::string> axes;
  bool vectorize = false; ///< whether the last axis is vectorized
  /// When set, computed instead at the outermost loop of this tiled stage:
  /// the region one tile reads, in the thread that reads it, while it stays
  /// in cache. At the root, every thread would write part of it and read
  /// the others' parts.
  std::string inside;
};

/// An input of a multi-level tiling packed by a cache_read computed at the
/// middle spatial level, whose loops over the input's own axes are moved
/// outside the others, so one packed panel serves every tile of the other
/// axes (the OpenBLAS panel of B in matmul).
struct Packing {
  std::string input;
  std::vector<std::string> axes; ///< the tiled stage's axes the input's indices use
  /// The packed copy's innermost axis (`axN` of the copy), vectorized: it
  /// is contiguous in the input and in the copy. Left scalar, an unroll
  /// pragma would expand it into one scalar copy per element, which LLVM
  /// does not vectorize again.
  std::string inner;
};

/// A multi-level tiling vectorized along a spatial axis other than the
/// last, over weights read along it. The weights are copied at the root by
/// a cache_read, which lowering stores with that axis innermost (the
/// blocked weight layout of oneDNN's convolutions); the data, loaded once
/// per register-tile row and broadcast, is computed inside each tile rather
/// than inlined (RootPlan::inside).
struct WeightVectorization {
  std::string axis;
  std::string weights;
};

/// Multi-level tiling ("SSRSRS": each spatial axis in 4 levels, each
/// reduction axis in 2), in place or with its outer levels on another stage
/// (a cache-write copy or an element-wise consumer).
struct MultiLevelPlan {
  std::string stage;
  std::string tiled; ///< stage that gets the multi-level tiling (stage or stage.local)
  std::string outer; ///< stage holding the outer tile levels; empty when tiled in place
  std::vector<std::string> outer_axes; ///< its axes, matching the tiled stage's spatial axes
  bool cache_write = false;
  int level = 0; ///< attach level (1 or 2) when `outer` is set
  /// The spatial axes that the reduction's broadcast operands (the loads
  /// that do not read the vectorized axis) read: outermost in the register
  /// tile, the others inside them next to the vectorized axis.
  std::vector<std::string> broadcast_axes;
  std::optional<Packing> packing;                          ///< level 1 with a cache write only
  std::optional<WeightVectorization> weight_vectorization; ///< level 1 with a cache write only
};

/// A reduction factored along its last reduction axis (`axis`, read
/// contiguously) by an rfactor step: `<stage>.rf` keeps a vector of partial
/// results per output element (`<axis>.r`, the factor a multiple of the
/// vector lanes, vectorized and innermost, `<axis>.o` outside it), its
/// spatial loops fused and parallel; the stage itself then combines the
/// partials. Ansor's rfactor rule, for reductions along memory that a
/// spatial axis cannot vectorize (row sums, softmax, layer norm).
struct RfactorPlan {
  std::string stage;
  std::string axis;
  std::vector<std::string> spatial_axes;      ///< the stage's axes
  std::vector<std::string> other_reduce_axes; ///< its other reduction axes, outside `axis`
  /// Computed at the row loop of a RowsPlan: nothing parallel of its own.
  bool in_rows = false;
};

/// Row operations fused (softmax, layer norm): every other stage of a
/// row-wise DAG computed at the output's row loop, so that one parallel
/// loop over the rows computes each row's reductions and values while the
/// row is in cache. The output's rows are split in 2 (the outer loop
/// parallel, the members computed at the inner one, a row at a time), its
/// last axis in 2 (the inner vectorized).
struct RowsPlan {
  struct Member {
    std::string stage;
    /// The axis its RfactorPlan factors (its `.rf` stage is computed at the
    /// row loop too), or empty.
    std::string rfactor_axis;
  };
  std::string stage;
  std::vector<Member> members; ///< in DAG order
};

/// What a sketch does with one stage.
using StagePlan = std::variant<InlinePlan, SimplePlan, OuterPlan, RootPlan, MultiLevelPlan,
                               RfactorPlan, RowsPlan>;

/// The stage a plan schedules.
inline const std::string& stage_of(const StagePlan& plan) {
  return std::visit([](const auto& p) -> const std::string& { return p.stage; }, plan);
}

} // namespace kiln::space

#endif // KILN_SPACE_STAGE_PLAN_H
