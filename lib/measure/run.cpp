#include "kiln/measure/run.h"

#include "kiln/codegen/jit.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/memory.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

namespace kiln::measure {

Expected<JitKernel> jit_compile(const schedule::LoweredFunc& func, const Target& target) {
  auto compiler = codegen::Compiler::create(target);
  if (!compiler)
    return compiler.error();
  auto object = (*compiler)->compile(func);
  if (!object)
    return object.error();
  auto jit = codegen::Jit::create();
  if (!jit)
    return jit.error();
  auto kernel = (*jit)->load(*object);
  if (!kernel)
    return kernel.error();
  return JitKernel{std::move(*jit), std::move(*kernel), object->times};
}

Expected<RunReport> compile_and_run(const ir::ComputeDAG& dag, const schedule::LoweredFunc& func,
                                    const Target& target, const RunOptions& options) {
  return catch_user_error([&]() -> Expected<RunReport> {
    if (auto err = check_memory(dag))
      return *err;
    auto compiled = jit_compile(func, target);
    if (!compiled)
      return compiled.error();
    codegen::LoadedKernel& kernel = *compiled->kernel;
    RunReport report;
    report.flops = dag.flop_count();
    report.compile = compiled->times;
    report.link_ms = kernel.link_ms();
    auto run_check_time = [&] {
      ArgumentBuffers buffers(dag, options.seed);
      Stopwatch prepack;
      kernel.prepack(buffers.pointers());
      double prepack_ms = kernel.has_prepack() ? prepack.elapsed_ms() : -1;
      kernel.run(buffers.pointers());
      ByteWriter w;
      w.put(prepack_ms);
      write_check_report(w, check_outputs(dag, buffers, options.check));
      Timing timing = time_function([&] { kernel.run(buffers.pointers()); }, options.timing);
      w.put(timing.number);
      w.put_doubles(timing.seconds);
      return std::move(w).take();
    };
    auto bytes =
        call_with(options.isolation, run_check_time, fmt::format("the kernel of '{}'", dag.name()));
    if (!bytes)
      return bytes.error();
    ByteReader r(*bytes);
    report.prepack_ms = r.get<double>();
    report.check = read_check_report(r);
    report.timing.number = r.get<int>();
    report.timing.seconds = r.get_doubles();
    return report;
  });
}

} // namespace kiln::measure
