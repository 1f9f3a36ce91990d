// Compile, run, check and time one kernel: what `kiln run` does.
#ifndef KILN_MEASURE_RUN_H
#define KILN_MEASURE_RUN_H

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/jit.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/checker.h"
#include "kiln/measure/isolation.h"
#include "kiln/measure/timer.h"
#include "kiln/schedule/loop_nest.h"

#include <cstdint>
#include <memory>
#include <string>

namespace kiln::measure {

struct RunOptions {
  std::uint64_t seed = 1; ///< input data
  TimingOptions timing;
  CheckOptions check;
  /// Run, check and time in kiln-worker (worker.h), so that a kernel that
  /// crashes or hangs is an Error (compilation stays in this process).
  Isolation isolation;
};

struct RunReport {
  double flops = 0;
  codegen::CompileTimes compile;
  double link_ms = 0; ///< loading the object (in the worker when isolated)
  /// The prepack function's one call (constant inputs packed ahead; not
  /// part of the timed calls), or a negative number when it has none.
  double prepack_ms = -1;
  Timing timing;
  /// Threads the kernel's parallel loops ran on, where it ran (the worker
  /// takes the caller's kiln_rt_num_threads).
  int threads = 0;
  CheckReport check;

  double gflops() const { return timing.median() > 0 ? flops / timing.median() / 1e9 : 0; }
};

/// A kernel compiled and loaded into a JIT of its own (the kernel is
/// unloaded before its JIT goes).
struct JitKernel {
  std::unique_ptr<codegen::Jit> jit;
  std::unique_ptr<codegen::LoadedKernel> kernel;
  codegen::CompileTimes times;
};

/// Compiles `func` for `target` into an object.
Expected<codegen::ObjectCode> compile_object(const schedule::LoweredFunc& func,
                                             const Target& target);
/// Loads `object` into a JIT of its own.
Expected<JitKernel> jit_load(const codegen::ObjectCode& object);
/// Compiles `func` for `target` and loads it.
Expected<JitKernel> jit_compile(const schedule::LoweredFunc& func, const Target& target);

/// JIT-compiles `func` (a lowering of `dag`) for `target`, runs it on seeded
/// inputs, compares with the interpreter, and times it.
Expected<RunReport> compile_and_run(const ir::ComputeDAG& dag, const schedule::LoweredFunc& func,
                                    const Target& target, const RunOptions& options);

} // namespace kiln::measure

#endif
