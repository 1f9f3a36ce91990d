// What the sketch rules need to know of a DAG: which stages are always
// inlined, and, with them substituted, which stages reuse data, how their
// reductions read their inputs, and who consumes them.
#ifndef KILN_LIB_SPACE_SKETCH_ANALYSIS_H
#define KILN_LIB_SPACE_SKETCH_ANALYSIS_H

#include "kiln/ir/compute_dag.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kiln::space {

/// An input a tiled stage can pack: its name and the stage's spatial axes
/// its indices use.
struct PackableInput {
  std::string input;
  std::vector<std::string> axes;
};

/// Weights a tiled stage can vectorize along: the input and the axis.
struct VectorizableWeights {
  std::string weights;
  std::string axis;
};

/// The DAG seen through the always-inline rule: effective bodies and
/// consumers with inlined stages substituted.
class Analysis {
public:
  explicit Analysis(const ir::ComputeDAG& dag);

  const ir::ComputeDAG& dag() const { return dag_; }
  /// Whether the always-inline rule inlines stage `name`: an element-wise
  /// stage that is not an output, has no reduction and calls no function.
  bool inlined(const std::string& name) const { return inlined_.count(name) > 0; }
  /// Stage `i` with the inlined stages it reads substituted.
  const ir::Stage& effective(int i) const { return effective_[i]; }

  /// Stages that read `index` once inlined stages are substituted.
  std::vector<int> consumers(int index) const;
  /// A reduction whose inputs are read without one of its spatial axes.
  bool has_data_reuse(int index) const;
  /// An input worth packing for the tiled stage `index`: a placeholder read
  /// directly (not through an inlined stage) whose indices skip a spatial
  /// axis but use the last one, so that a packed block of it is reused
  /// across the skipped axis and contiguous along the vectorised one.
  std::optional<PackableInput> packable_input(int index) const;
  /// Weights to vectorize along for the tiled stage `index`: a placeholder
  /// read directly whose indices use a spatial axis other than the last and
  /// skip the last one, while no other load of the reduction uses that
  /// axis (so each of their elements is one broadcast for a whole vector
  /// of it).
  std::optional<VectorizableWeights> vectorizable_weights(int index) const;
  /// The spatial axes of stage `index` that its reduction's broadcast
  /// operands read: the loads that do not read `vector_axis`.
  std::vector<std::string> broadcast_axes(int index, const std::string& vector_axis) const;
  /// Whether the reduction of stage `reader` reads `tensor`, directly, only
  /// in loads that do not read its vectorized axis (`vector_axis`, or its
  /// last axis when empty): every element a broadcast.
  bool broadcast_only(int reader, const std::string& tensor, std::string vector_axis) const;
  /// The reduction axis of stage `index` worth an rfactor: its last one,
  /// when the axis is at least `min_extent` long and some load of the body
  /// reads along it contiguously (its last index is the axis), so that
  /// vectors of partial results run along memory; and the reduction has no
  /// data reuse, or that load is read once (it uses every spatial axis
  /// longer than 1: a batch-1 dense layer's weight, whose stream bounds the
  /// kernel while a register tile only saves reads of the small vector it
  /// multiplies). Empty otherwise.
  std::string rfactor_axis(int index, std::int64_t min_extent) const;
  /// Whether the DAG is row-wise around its output `output`: a single
  /// output of two axes, not a reduction; every other stage not inlined
  /// has the output's first axis (the rows) as its own first axis, and
  /// every load of a computed stage reads the row of the reader's first
  /// axis; and some of them reduce (along the rows). Its stages can then
  /// all be computed at the output's row loop (RowsPlan).
  bool rows_fusable(int output) const;
  /// The only consumer, when it reads `index` element-wise (same shape,
  /// indexed by exactly its own axes) and is not itself a reduction; -1 if
  /// there is none.
  int elementwise_consumer(int index) const;

private:
  const ir::ComputeDAG& dag_;
  std::set<std::string> inlined_;
  std::vector<ir::Stage> effective_;
  std::map<std::string, ir::Stage> storage_; ///< node-stable copies for inlining
};

/// The stage a plan schedules: a DAG stage, or the copy `X.cache` that a
/// cache_read of input X makes (axes ax0, ax1, ... over X's shape).
ir::Stage scheduled_stage(const ir::ComputeDAG& dag, const std::string& name);

} // namespace kiln::space

#endif // KILN_LIB_SPACE_SKETCH_ANALYSIS_H
