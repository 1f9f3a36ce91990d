// The answer every candidate must reproduce: the naive schedule's outputs on
// the seeded inputs, themselves checked once against the interpreter.
// Comparing with a compiled reference is fast enough to check every element
// of every trial.
#ifndef KILN_MEASURE_REFERENCE_H
#define KILN_MEASURE_REFERENCE_H

#include "kiln/codegen/target.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/checker.h"
#include "kiln/measure/isolated_call.h"

#include <cstdint>
#include <vector>

namespace kiln::measure {

class Reference {
public:
  /// Compiles and runs the naive schedule on inputs from `seed` and checks
  /// it against the interpreter. An Error when the op does not fit in
  /// memory, the naive kernel itself is wrong (a kiln bug), the interpreter
  /// fails (e.g. the op reads out of bounds at an index computed from data),
  /// or, under `isolation`, the computation crashes or passes its timeout.
  static Expected<Reference> create(const ir::ComputeDAG& dag, const Target& target,
                                    std::uint64_t seed, const CheckOptions& options = {},
                                    const Isolation& isolation = {});

  std::uint64_t seed() const { return seed_; }
  const CheckReport& interpreter_check() const { return interpreter_check_; }
  /// Every element of every output of `candidate` against the reference.
  CheckReport compare(const ir::ComputeDAG& dag, const ArgumentBuffers& candidate) const;

private:
  std::uint64_t seed_ = 0;
  CheckOptions options_;
  CheckReport interpreter_check_;
  std::vector<std::vector<double>> outputs_;
  std::vector<double> scales_; ///< max_finite_abs of each output
};

} // namespace kiln::measure

#endif
