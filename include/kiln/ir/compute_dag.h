// The compute DAG: an operator as stages. Placeholders are the inputs;
// compute stages define every element of their output by an expression over
// their axes (a reduction is the whole body of its stage). Stages are kept in
// a topological order: a stage reads only stages before it.
#ifndef KILN_IR_COMPUTE_DAG_H
#define KILN_IR_COMPUTE_DAG_H

#include "kiln/ir/expr.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kiln::ir {

enum class StageKind : std::uint8_t { Placeholder, Compute };

struct Stage {
  StageKind kind = StageKind::Compute;
  std::string name;
  ScalarType dtype = ScalarType::F32;
  /// One axis per dimension. For a placeholder the names are d0, d1, …
  std::vector<IterVar> axes;
  /// The value of element `axes` (compute stages only).
  Expr body;
  bool is_output = false;
  /// A placeholder whose values stay the same from call to call (a model's
  /// weights): stages computed from constants alone may be computed once,
  /// ahead of the calls (the kernel's prepack function, docs/kernel-abi.md).
  bool is_constant = false;
  /// Where the stage was declared, for error messages (may be invalid).
  SourceLocation where;

  std::vector<std::int64_t> shape() const;
  std::int64_t num_elements() const;
  bool is_placeholder() const { return kind == StageKind::Placeholder; }
  /// The reduction that forms the body, or nullptr.
  const Reduce* reduction() const;
};

/// An integer parameter of the op as it was set (for records and display).
struct Param {
  std::string name;
  std::int64_t value = 0;
  bool operator==(const Param&) const = default;
};

class ComputeDAG {
public:
  ComputeDAG() = default;
  /// Checks the stages (unique names, loads of earlier stages with the right
  /// number of indices, every variable bound, reductions only at the top, at
  /// least one output) and throws UserError when they are not a valid DAG.
  ComputeDAG(std::string name, std::vector<Stage> stages, std::vector<Param> params = {});

  const std::string& name() const { return name_; }
  const std::vector<Stage>& stages() const { return stages_; }
  const Stage& stage(int index) const { return stages_.at(index); }
  const std::vector<Param>& params() const { return params_; }

  /// Index of the stage with this name, or -1.
  int find_stage(std::string_view name) const;
  /// Whether stage `index` depends on constant inputs only: a constant
  /// placeholder, or a compute stage that reads only such stages (a stage
  /// that reads nothing, such as an iota, is not: it is no input's data).
  bool is_constant(int index) const;
  /// is_constant of every stage, in one walk.
  std::vector<bool> constant_stages() const;
  /// The kernel's arguments: placeholders in declaration order, then outputs.
  std::vector<int> arguments() const;
  /// Compute stages that are not outputs (intermediate buffers).
  std::vector<int> intermediates() const;
  /// Stages read by stage `index` (each once, in stage order).
  std::vector<int> producers(int index) const;
  /// Stages that read stage `index`.
  std::vector<int> consumers(int index) const;

  /// Floating-point operations of one evaluation: every float arithmetic
  /// operation, comparison and math call, and one per reduction step
  /// (matmul M×N×K counts 2·M·N·K). Index arithmetic is not counted.
  double flop_count() const;

  /// Canonical op-language text (see printer.h).
  std::string to_string() const;
  /// `name-` plus 16 hex digits of a stable hash of to_string(): equal DAGs
  /// (parsed or built in C++) have equal keys on every machine.
  std::string workload_key() const;

private:
  std::string name_;
  std::vector<Stage> stages_;
  std::vector<Param> params_;
};

/// Replaces every load of a stage in `stages` by that stage's body with its
/// axes bound to the load's indices (inlining). Bodies in `stages` must
/// already have their own inlined stages substituted.
Expr inline_stages(const Expr& e, const std::map<std::string, const Stage*>& stages);

/// Checks one stage against the stages before it, throwing UserError. The
/// parser calls it too, after checking with locations itself.
void validate_stage(const std::vector<Stage>& earlier, const Stage& stage);

} // namespace kiln::ir

#endif // KILN_IR_COMPUTE_DAG_H
