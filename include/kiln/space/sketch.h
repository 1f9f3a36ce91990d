// Ansor-style search space: sketches derived from the DAG by rules, filled by
// random annotation.
//
// A sketch fixes the structure of a schedule: which stages are inlined,
// which get multi-level tiling ("SSRSRS": each spatial axis in 4 levels,
// each reduction axis in 2), whether a tiled stage accumulates in a local
// cache or is fused into its element-wise consumer and at which tile level,
// and which stages get a simple tiling. A config of a sketch is its open
// decisions: tile sizes, how many outer loops run in parallel, the
// auto-unroll step. Every config maps to an ordinary list of steps, so
// everything downstream (measurement, records, replay) sees plain States.
//
// The rules (lib/space/sketch_rules.h, one type each, tried in one ordered
// list) walk the stages from the output back to the inputs:
//  - placeholders are skipped;
//  - always-inline: an element-wise stage that is not an output, has no
//    reduction and calls no math function (padding, bias add) is inlined,
//    unless a register tile only broadcasts what it reads of it: then it is
//    computed inside each tile (a select per broadcast would cost more);
//  - multi-level tiling with fusion: a stage with data reuse (a reduction
//    that some input reads without one of its spatial axes: matmul, conv,
//    batch matmul) whose only consumer reads it element-wise is tiled and
//    computed at that consumer's tile, at level 1 or 2 (two sketches);
//  - otherwise a stage with data reuse gets multi-level tiling with a cache
//    write (accumulated in `<stage>.local`, computed at level 1 or 2 of the
//    copy), in place, packed (an input read without one spatial axis but
//    with the last, copied in panels as OpenBLAS does; Ansor's CPU rules
//    have no such step) and, when no input can be packed, weight-vectorized
//    (vectorized along the output channels over a copy of the weights
//    stored with them innermost, as oneDNN's blocked convolutions are);
//  - simple tiling for every other computed stage (also reductions without
//    reuse such as row sums and softmax);
//  - rfactor: a reduction without reuse whose last reduction axis is long
//    (64 or more) and read along memory also gets a sketch where an rfactor
//    step keeps 1 to 4 vectors of partial results per output element,
//    combined afterwards (Ansor's rfactor rule), after the simple one.
// What a sketch does with each stage is a StagePlan (stage_plan.h).
#ifndef KILN_SPACE_SKETCH_H
#define KILN_SPACE_SKETCH_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/state.h"
#include "kiln/space/space_params.h"
#include "kiln/space/stage_plan.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace kiln::space {

/// One tile decision: an axis of a stage split in `parts` levels.
struct TileAxis {
  std::string stage; ///< the stage whose axis it is (in the original DAG)
  std::string axis;
  std::int64_t extent = 0;
  int parts = 0;
  bool reduce = false;
  std::int64_t max_innermost = 64;
  /// The innermost factor is a multiple of this: the vector lanes for the
  /// vectorized axis when its extent is a whole number of vectors, 1
  /// otherwise. A vector loop shorter than the register (k 8 of a 16-lane
  /// zmm) wastes lanes on every instruction of the register tile, and
  /// uniform draws give such tiles 7 times in 8 (64 = 4 factors: 74 of 84).
  /// Ansor samples them too and leaves them to its model; kiln does not
  /// spend trials there.
  std::int64_t innermost_multiple = 1;
  /// Whether tilings with a tail are drawn too (tilings()), and the vector
  /// lanes their innermost factor is a multiple of (1: not vectorized).
  bool tails = false;
  std::int64_t vector_lanes = 1;

  /// The tilings a search draws from: the exact factorizations, and the
  /// tailed ones when `tails`. Never empty.
  const std::vector<std::vector<std::int64_t>>& candidates() const;
  /// Whether some candidate has a tail (never for a power of two).
  bool has_tailed_candidates() const;
  /// Whether a config's factors for this axis are a tiling the space can
  /// run: `parts` factors, is_tiling, and no tail unless `tails`. The
  /// innermost bounds are not checked, so that a log written by a space
  /// without them still names a program of this one.
  bool admits(const std::vector<std::int64_t>& factors) const;
};

/// The open decisions of a sketch, filled.
struct SketchConfig {
  int sketch = 0;
  std::vector<std::vector<std::int64_t>> tiles; ///< per TileAxis: `parts` factors, outer first
  std::vector<int> parallel;                    ///< per stage plan: outer loops fused parallel
  std::vector<std::int64_t> unroll;             ///< per stage plan: auto_unroll_max_step
  bool operator==(const SketchConfig&) const = default;
};

class Sketch {
public:
  Sketch(std::string name, std::vector<StagePlan> plans, std::vector<TileAxis> axes)
      : name_(std::move(name)), plans_(std::move(plans)), axes_(std::move(axes)) {}

  const std::string& name() const { return name_; }
  const std::vector<StagePlan>& plans() const { return plans_; }
  const std::vector<TileAxis>& axes() const { return axes_; }

  /// The steps of a filled config (never refused by State::apply for a
  /// config this sketch sampled or mutated).
  std::vector<schedule::Step> steps(const SketchConfig& config) const;
  /// The steps every config's steps start with (inlining, cache writes):
  /// they do not depend on the config.
  std::vector<schedule::Step> structure_steps() const;
  /// How many outer loops a plan can run in parallel (the choices are 0..n).
  int max_parallel(int plan) const;
  /// Whether a plan's auto_unroll knob reaches its steps (a multi-level
  /// tiling, or a simple plan with a reduction). The others' knob stays 0:
  /// a point differing only there would be another point for the same
  /// program, which the search would propose and the tuner then skip.
  bool uses_unroll(int plan) const;

private:
  std::string name_;
  std::vector<StagePlan> plans_;
  std::vector<TileAxis> axes_;
};

/// Ansor's choices of auto_unroll_max_step.
inline constexpr std::int64_t kUnrollChoices[] = {0, 16, 64, 512};

class SketchSpace {
public:
  SketchSpace(const ir::ComputeDAG& dag, const SpaceParams& params);

  const ir::ComputeDAG& dag() const { return dag_; }
  const SpaceParams& params() const { return params_; }
  const std::vector<Sketch>& sketches() const { return sketches_; }

  /// A random config: a sketch, then tile sizes uniform among each axis's
  /// candidates (TileAxis::candidates: exact factorizations, and tilings
  /// with a tail), a parallel granularity, an unroll step.
  SketchConfig sample(std::mt19937_64& rng) const;
  /// A random config of one sketch (the same draws as sample() makes after
  /// choosing the sketch).
  SketchConfig sample(int sketch, std::mt19937_64& rng) const;
  /// One random change (Ansor's mutations, the first widened): two levels
  /// of a tile share their product as another factor pair (90%; a divisor
  /// moved from one to the other, or factors exchanged; on an axis with
  /// tails half of these give one inner level another candidate size
  /// instead), redraw an unroll step, or change the parallel granularity.
  SketchConfig mutate(const SketchConfig& config, std::mt19937_64& rng) const;
  /// Every config one mutation away, each with the decision it changes: a
  /// tile axis t is decision t; plan p's parallel loops and unroll step are
  /// decisions tiles + 2p and tiles + 2p + 1.
  std::vector<std::pair<int, SketchConfig>> neighbours(const SketchConfig& config) const;
  /// Takes each decision group (a tile axis, a plan's annotations) from one
  /// parent or the other; both parents must share a sketch.
  SketchConfig crossover(const SketchConfig& a, const SketchConfig& b, std::mt19937_64& rng) const;

  std::vector<schedule::Step> steps(const SketchConfig& config) const {
    return sketches_.at(config.sketch).steps(config);
  }
  /// The config's schedule: its steps replayed on the DAG, from a state of
  /// its sketch's structure steps made once (that part of the replay
  /// rewrites the DAG and cost as much as all the tiling steps).
  Expected<schedule::State> state(const SketchConfig& config) const;
  /// The flat numeric view of a config: the sketch, every factor, the
  /// annotations (for display and the knob view of a config).
  std::vector<std::int64_t> flatten(const SketchConfig& config) const;
  /// The inverse of flatten; nullopt when the numbers do not form a config.
  std::optional<SketchConfig> unflatten(const std::vector<std::int64_t>& flat) const;

  /// The sketches as loop nests with every tile size 1 (for `kiln space
  /// --sketches`), each headed by its name and its open decisions.
  std::string describe() const;

private:
  ir::ComputeDAG dag_;
  SpaceParams params_;
  std::vector<Sketch> sketches_;
  /// Per sketch, its structure steps replayed (nullopt if they are refused:
  /// then state() replays from the DAG and reports the refusal).
  std::vector<std::optional<schedule::State>> structures_;
};

} // namespace kiln::space

#endif
