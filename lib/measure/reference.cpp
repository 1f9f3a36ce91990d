#include "kiln/measure/reference.h"

#include "worker_call.h"
#include "worker_jobs.h"

#include "kiln/codegen/jit.h"
#include "kiln/measure/memory.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>

namespace kiln::measure {

/// Runs the naive kernel and checks it against the interpreter: the check,
/// then each output, as bytes (so that it can run in the worker process).
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

std::string reference_job(ByteReader& request) {
  ir::ComputeDAG dag = protocol::get_dag(request);
  auto seed = request.get<std::uint64_t>();
  CheckOptions options = read_check_options(request);
  JitKernel loaded = jit_load(protocol::get_object(request)).take();
  return compute_reference(dag, *loaded.kernel, seed, options);
}

Expected<Reference> Reference::create(const ir::ComputeDAG& dag, const Target& target,
                                      std::uint64_t seed, const CheckOptions& options,
                                      const Isolation& isolation) {
  return catch_user_error([&]() -> Expected<Reference> {
    if (auto err = check_memory(dag))
      return *err;
    auto object = compile_object(schedule::lower_naive(dag), target);
    if (!object)
      return object.error();
    auto request = [&] {
      ByteWriter w;
      protocol::put_dag(w, dag);
      w.put(seed);
      write_check_options(w, options);
      protocol::put_object(w, *object);
      return std::move(w).take();
    };
    auto here = [&] {
      JitKernel loaded = jit_load(*object).take();
      return compute_reference(dag, *loaded.kernel, seed, options);
    };
    auto bytes = call_with(isolation, protocol::Job::Reference, request, here,
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

void Reference::write(ByteWriter& w) const {
  w.put(seed_);
  write_check_options(w, options_);
  write_check_report(w, interpreter_check_);
  w.put<std::uint64_t>(outputs_.size());
  for (const std::vector<double>& output : outputs_)
    w.put_doubles(output);
  w.put_doubles(scales_);
}

Reference Reference::read(ByteReader& r) {
  Reference ref;
  ref.seed_ = r.get<std::uint64_t>();
  ref.options_ = read_check_options(r);
  ref.interpreter_check_ = read_check_report(r);
  ref.outputs_.resize(r.get<std::uint64_t>());
  for (std::vector<double>& output : ref.outputs_)
    output = r.get_doubles();
  ref.scales_ = r.get_doubles();
  return ref;
}

} // namespace kiln::measure
