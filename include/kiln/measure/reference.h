// The answer every candidate must reproduce: the naive schedule's outputs on
// the seeded inputs, themselves checked once against the interpreter.
// Comparing with a compiled reference is fast enough to check every element
// of every trial.
#ifndef KILN_MEASURE_REFERENCE_H
#define KILN_MEASURE_REFERENCE_H

#include "kiln/codegen/target.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/bytes.h"
#include "kiln/measure/checker.h"
#include "kiln/measure/isolation.h"

#include <cstdint>
#include <vector>

namespace kiln::measure {

class Reference {
public:
  /// Compiles the naive schedule, runs it on inputs from `seed` and checks
  /// it against the interpreter; under `isolation` the run and the check
  /// are made in kiln-worker (worker.h). An Error when the op does not fit
  /// in memory, the naive kernel itself is wrong (a kiln bug), the
  /// interpreter fails (e.g. the op reads out of bounds at an index
  /// computed from data), or, under `isolation`, the computation crashes,
  /// passes its timeout, or the worker cannot be started.
  static Expected<Reference> create(const ir::ComputeDAG& dag, const Target& target,
                                    std::uint64_t seed, const CheckOptions& options = {},
                                    const Isolation& isolation = {});

  std::uint64_t seed() const { return seed_; }
  const CheckReport& interpreter_check() const { return interpreter_check_; }
  /// Every element of every output of `candidate` against the reference.
  CheckReport compare(const ir::ComputeDAG& dag, const ArgumentBuffers& candidate) const;

  /// The reference as bytes and back: the isolated runner sends it to its
  /// worker rather than have the worker compute it again.
  void write(ByteWriter& w) const;
  static Reference read(ByteReader& r);

private:
  std::uint64_t seed_ = 0;
  CheckOptions options_;
  CheckReport interpreter_check_;
  std::vector<std::vector<double>> outputs_;
  std::vector<double> scales_; ///< max_finite_abs of each output
};

} // namespace kiln::measure

#endif
