#include "kiln/measure/run.h"

#include "worker_call.h"
#include "worker_jobs.h"

#include "kiln/codegen/jit.h"
#include "kiln/codegen/runtime.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/memory.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<codegen::ObjectCode> compile_object(const schedule::LoweredFunc& func,
                                             const Target& target) {
  auto compiler = codegen::Compiler::create(target);
  if (!compiler)
    return compiler.error();
  return (*compiler)->compile(func);
}

Expected<JitKernel> jit_load(const codegen::ObjectCode& object) {
  auto jit = codegen::Jit::create();
  if (!jit)
    return jit.error();
  auto kernel = (*jit)->load(object);
  if (!kernel)
    return kernel.error();
  return JitKernel{std::move(*jit), std::move(*kernel), object.times};
}

Expected<JitKernel> jit_compile(const schedule::LoweredFunc& func, const Target& target) {
  auto object = compile_object(func, target);
  if (!object)
    return object.error();
  return jit_load(*object);
}

namespace {

/// Loads `object`, runs it on seeded inputs, checks and times it: the load
/// time, the prepack time, the check and the timing, as bytes (so that it
/// can run in the worker process).
std::string load_run_check_time(const ir::ComputeDAG& dag, const codegen::ObjectCode& object,
                                std::uint64_t seed, const TimingOptions& timing_options,
                                const CheckOptions& check_options) {
  JitKernel loaded = jit_load(object).take();
  codegen::LoadedKernel& kernel = *loaded.kernel;
  ArgumentBuffers buffers(dag, seed);
  Stopwatch prepack;
  kernel.prepack(buffers.pointers());
  double prepack_ms = kernel.has_prepack() ? prepack.elapsed_ms() : -1;
  kernel.run(buffers.pointers());
  ByteWriter w;
  w.put(kernel.link_ms());
  w.put(prepack_ms);
  write_check_report(w, check_outputs(dag, buffers, check_options));
  Timing timing = time_function([&] { kernel.run(buffers.pointers()); }, timing_options);
  w.put(timing.number);
  w.put_doubles(timing.seconds);
  w.put(static_cast<std::int32_t>(kiln_rt_num_threads()));
  return std::move(w).take();
}

} // namespace

std::string run_job(ByteReader& request) {
  ir::ComputeDAG dag = protocol::get_dag(request);
  auto seed = request.get<std::uint64_t>();
  TimingOptions timing = protocol::get_timing(request);
  CheckOptions check = read_check_options(request);
  codegen::ObjectCode object = protocol::get_object(request);
  return load_run_check_time(dag, object, seed, timing, check);
}

Expected<RunReport> compile_and_run(const ir::ComputeDAG& dag, const schedule::LoweredFunc& func,
                                    const Target& target, const RunOptions& options) {
  return catch_user_error([&]() -> Expected<RunReport> {
    if (auto err = check_memory(dag))
      return *err;
    auto object = compile_object(func, target);
    if (!object)
      return object.error();
    RunReport report;
    report.flops = dag.flop_count();
    report.compile = object->times;
    auto request = [&] {
      ByteWriter w;
      protocol::put_dag(w, dag);
      w.put(options.seed);
      protocol::put_timing(w, options.timing);
      write_check_options(w, options.check);
      protocol::put_object(w, *object);
      return std::move(w).take();
    };
    auto here = [&] {
      return load_run_check_time(dag, *object, options.seed, options.timing, options.check);
    };
    auto bytes = call_with(options.isolation, protocol::Job::Run, request, here,
                           fmt::format("the kernel of '{}'", dag.name()));
    if (!bytes)
      return bytes.error();
    ByteReader r(*bytes);
    report.link_ms = r.get<double>();
    report.prepack_ms = r.get<double>();
    report.check = read_check_report(r);
    report.timing.number = r.get<int>();
    report.timing.seconds = r.get_doubles();
    report.threads = r.get<std::int32_t>();
    return report;
  });
}

} // namespace kiln::measure
