#include "kiln/measure/reference.h"

#include "kiln/codegen/jit.h"
#include "kiln/measure/memory.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>

namespace kiln::measure {

/// Runs the naive kernel and checks it against the interpreter: the check,
/// then each output, as bytes (so that it can run in a child process).
static std::string compute_reference(const ir::ComputeDAG& dag, codegen::LoadedKernel& kernel,
                                     std::uint64_t seed, const CheckOptions& options) {
  ArgumentBuffers buffers(dag, seed);
  kernel.prepack(buffers.pointers());
  kernel.run(buffers.pointers());
  ByteWriter w;
  write_check_report(w, check_outputs(dag, buffers, options));
  for (int arg = 0; arg < buffers.size(); ++arg)
    if (dag.stage(buffers.stage_of(arg)).is_output)
      w.put_doubles(buffers.values(arg));
  return std::move(w).take();
}

Expected<Reference> Reference::create(const ir::ComputeDAG& dag, const Target& target,
                                      std::uint64_t seed, const CheckOptions& options,
                                      const Isolation& isolation) {
  return catch_user_error([&]() -> Expected<Reference> {
    if (auto err = check_memory(dag))
      return *err;
    auto compiled = jit_compile(schedule::lower_naive(dag), target);
    if (!compiled)
      return compiled.error();
    auto compute = [&] { return compute_reference(dag, *compiled->kernel, seed, options); };
    auto bytes = call_with(isolation, compute,
                           fmt::format("the reference computation of '{}' (its naive kernel and "
                                       "the interpreter)",
                                       dag.name()));
    if (!bytes)
      return bytes.error();
    ByteReader r(*bytes);
    Reference ref;
    ref.seed_ = seed;
    ref.options_ = options;
    ref.interpreter_check_ = read_check_report(r);
    if (!ref.interpreter_check_.passed)
      return Error("reference-mismatch",
                   fmt::format("the naive kernel of '{}' disagrees with the interpreter beyond "
                               "the tolerance ({}); if the tolerance is not too strict for this "
                               "op, this is a bug in kiln: please report it",
                               dag.name(), ref.interpreter_check_.describe()));
    for (int index : dag.arguments())
      if (dag.stage(index).is_output) {
        ref.outputs_.push_back(r.get_doubles());
        ref.scales_.push_back(max_finite_abs(ref.outputs_.back()));
      }
    return ref;
  });
}

CheckReport Reference::compare(const ir::ComputeDAG& dag, const ArgumentBuffers& candidate) const {
  return compare_outputs(dag, candidate, outputs_, options_, scales_);
}

} // namespace kiln::measure
