// The reference interpreter: evaluates a DAG in double precision, directly
// from the definitions, one element at a time. Obviously right rather than
// fast. Elements are computed on demand and remembered, so checking a sample
// of an output costs only the elements it depends on.
#ifndef KILN_IR_INTERPRETER_H
#define KILN_IR_INTERPRETER_H

#include "kiln/ir/compute_dag.h"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace kiln::ir {

class Interpreter {
public:
  /// `inputs` holds one row-major buffer per placeholder, by name. Throws
  /// UserError when one is missing or has the wrong size.
  Interpreter(const ComputeDAG& dag, std::map<std::string, std::vector<double>> inputs);

  /// The value of stage `stage` at `index`. Throws UserError when evaluation
  /// reads a tensor out of its bounds (naming the stage, the read and the
  /// element being computed).
  double at(int stage, std::span<const std::int64_t> index);
  /// Every element of stage `stage`, row-major.
  std::vector<double> evaluate(int stage);

private:
  struct Memo {
    std::vector<double> values;
    std::vector<bool> known;
  };
  double eval(const Expr& e, std::vector<std::pair<const std::string*, std::int64_t>>& env,
              int stage, std::span<const std::int64_t> index);
  double load(const Load* l, std::vector<std::pair<const std::string*, std::int64_t>>& env,
              int stage, std::span<const std::int64_t> index);

  const ComputeDAG& dag_;
  std::vector<Memo> memo_; ///< per stage; placeholders are fully "known"
};

/// Applies a scalar type's rounding to a double (f32 rounds to float, i32
/// wraps to 32 bits, bool becomes 0/1); used by the interpreter for casts.
double round_to_type(double value, ScalarType type);

} // namespace kiln::ir

#endif // KILN_IR_INTERPRETER_H
