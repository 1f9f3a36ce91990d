#include "kiln/measure/reference.h"

#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<Reference> Reference::create(const ir::ComputeDAG& dag, const codegen::Target& target,
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
      std::vector<double> values(buffers.num_elements(arg));
      for (std::int64_t i = 0; i < buffers.num_elements(arg); ++i)
        values[i] = buffers.value(arg, i);
      ref.outputs_.push_back(std::move(values));
    }
    return ref;
  });
}

CheckReport Reference::compare(const ir::ComputeDAG& dag, const ArgumentBuffers& candidate) const {
  return compare_outputs(dag, candidate, outputs_, options_);
}

} // namespace kiln::measure
