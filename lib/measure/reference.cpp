#include "kiln/measure/reference.h"

#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<Reference> Reference::create(const ir::ComputeDAG& dag, const Target& target,
                                      std::uint64_t seed, const CheckOptions& options) {
  return catch_user_error([&]() -> Expected<Reference> {
    auto compiled = jit_compile(schedule::lower_naive(dag), target);
    if (!compiled)
      return compiled.error();
    ArgumentBuffers buffers(dag, seed);
    compiled->kernel->run(buffers.pointers());
    Reference ref;
    ref.seed_ = seed;
    ref.options_ = options;
    ref.interpreter_check_ = check_outputs(dag, buffers, options);
    if (!ref.interpreter_check_.passed)
      return Error("reference-mismatch",
                   fmt::format("the naive kernel of '{}' disagrees with the interpreter beyond "
                               "the tolerance ({}); if the tolerance is not too strict for this "
                               "op, this is a bug in kiln: please report it",
                               dag.name(), ref.interpreter_check_.describe()));
    for (int arg = 0; arg < buffers.size(); ++arg) {
      if (!dag.stage(buffers.stage_of(arg)).is_output)
        continue;
      ref.outputs_.push_back(buffers.values(arg));
      ref.scales_.push_back(max_finite_abs(ref.outputs_.back()));
    }
    return ref;
  });
}

CheckReport Reference::compare(const ir::ComputeDAG& dag, const ArgumentBuffers& candidate) const {
  return compare_outputs(dag, candidate, outputs_, options_, scales_);
}

} // namespace kiln::measure
