// A State: the compute DAG plus an ordered list of transform steps, and what
// they make of each stage (its loops, where it is computed, its marks).
// Built by applying steps one at a time; each is validated against the
// current state and refused with an Error when it cannot apply.
#ifndef KILN_SCHEDULE_STATE_H
#define KILN_SCHEDULE_STATE_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/program_key.h"
#include "kiln/schedule/transform_step.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace kiln::schedule {

enum class IterKind : std::uint8_t { Spatial, Reduce };

/// One loop of a stage.
struct Iterator {
  std::string name;
  std::int64_t extent = 0; ///< at the stage's root extents (bounds may shrink it)
  IterKind kind = IterKind::Spatial;
  Annotation annotation = Annotation::None;
};

/// How a stage's loops derive from its axes, replayed by lowering with the
/// extents bound inference gives.
struct SplitRelation {
  std::string parent;
  std::vector<std::string> children; ///< outer to inner
  std::vector<std::int64_t> factors; ///< extents of children[1..]
};
struct FuseRelation {
  std::vector<std::string> parents; ///< outer to inner
  std::string child;
};
using Relation = std::variant<SplitRelation, FuseRelation>;

enum class Location : std::uint8_t { Root, Inline, At };

struct StageState {
  std::string name;
  std::vector<Iterator> iters; ///< loops, outer to inner
  std::vector<Relation> relations;
  Location location = Location::Root;
  std::string at_stage, at_iter; ///< when location == At
  std::int64_t auto_unroll_max_step = 0;
  bool transformed = false; ///< any loop step applied (cache steps must come first)

  const Iterator* find_iter(std::string_view name) const;
};

class State {
public:
  /// The naive schedule of `dag`: no steps.
  explicit State(ir::ComputeDAG dag);

  /// Replays `steps` on `dag`; the first step that cannot apply is the Error
  /// (with its index).
  static Expected<State> replay(const ir::ComputeDAG& dag, const std::vector<Step>& steps);
  /// Replays `steps` on `base`, a state whose steps are the first steps of
  /// `steps` (made once and copied, when many replays share a prefix).
  static Expected<State> replay(State base, const std::vector<Step>& steps);
  /// Reads a schedule file (docs/schedule-format.md) and replays its steps
  /// on `dag`; a step that cannot apply is an Error naming the file.
  static Expected<State> load(const ir::ComputeDAG& dag, const std::string& path);

  /// The DAG as the steps made it (cache stages added).
  const ir::ComputeDAG& dag() const { return dag_; }
  const ir::ComputeDAG& original_dag() const { return original_; }
  const std::vector<Step>& steps() const { return steps_; }
  /// One per stage of dag(), in the same order.
  const std::vector<StageState>& stages() const { return stages_; }
  const StageState* find_stage(std::string_view name) const;

  /// Validates and applies a step; on error the state is unchanged.
  std::optional<Error> apply(const Step& step);

  // Convenience: apply and throw UserError when the step cannot apply.
  std::vector<std::string> split(const std::string& stage, const std::string& iter,
                                 std::vector<std::int64_t> factors);
  std::string fuse(const std::string& stage, std::vector<std::string> iters);
  void reorder(const std::string& stage, std::vector<std::string> order);
  void compute_at(const std::string& stage, const std::string& target, const std::string& iter);
  void compute_inline(const std::string& stage);
  void compute_root(const std::string& stage);
  std::string cache_write(const std::string& stage);
  std::string cache_read(const std::string& stage, const std::string& reader);
  /// Returns the new stage, `<stage>.rf`.
  std::string rfactor(const std::string& stage, const std::string& iter, std::int64_t factor);
  void annotate(const std::string& stage, const std::string& iter, Annotation a);
  void parallel(const std::string& stage, const std::string& iter);
  void vectorize(const std::string& stage, const std::string& iter);
  void unroll(const std::string& stage, const std::string& iter);
  void pragma_auto_unroll(const std::string& stage, std::int64_t max_step);

  /// Canonical form: the steps as JSON. Equal states print equally.
  std::string to_string() const { return steps_to_json(steps_); }
  /// The program's identity (program_key.h): equal for equal step lists.
  ProgramKey key() const { return program_key(steps_); }

private:
  void apply_or_throw(const Step& step);
  /// apply without a copy to roll back to: the state is left half-changed
  /// when the step is refused. For replay, which drops such a state.
  std::optional<Error> apply_unguarded(const Step& step);
  ir::ComputeDAG original_;
  ir::ComputeDAG dag_;
  std::vector<StageState> stages_;
  std::vector<Step> steps_;
};

/// The loops a stage starts with: its axes, then its reduction axes.
StageState initial_stage_state(const ir::Stage& stage);

} // namespace kiln::schedule

#endif
