// From a lowered loop nest to machine code: LLVM IR, the O3 pipeline, and a
// relocatable object. The object is what the JIT loads, what a worker process
// receives, and what export writes out, so every path runs the same bytes.
#ifndef KILN_CODEGEN_COMPILER_H
#define KILN_CODEGEN_COMPILER_H

#include "kiln/codegen/target.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/support/error.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::codegen {

/// What `kiln dump --stage` shows.
enum class DumpStage { LLVM, Optimized, Assembly };

/// Where compile time went, in milliseconds.
struct CompileTimes {
  double ir_ms = 0;      ///< loop nest → LLVM IR, verified
  double opt_ms = 0;     ///< the O3 pipeline
  double codegen_ms = 0; ///< instruction selection to object code
  double total_ms() const { return ir_ms + opt_ms + codegen_ms; }
};

/// A compiled kernel as a relocatable object file for its target.
struct ObjectCode {
  std::string kernel;        ///< typed entry point symbol
  std::string packed_kernel; ///< `void(void**)` wrapper symbol
  /// The prepack function's `void(void**)` wrapper, or empty when the
  /// kernel packs nothing ahead.
  std::string packed_prepack;
  /// Bytes of each Packed argument (the last ones): the caller allocates
  /// them, 64-byte aligned, and prepack fills them.
  std::vector<std::int64_t> packed_bytes;
  int num_args = 0;
  std::vector<char> bytes;
  CompileTimes times;
};

/// Compiles loop nests for one target. Holds an LLVM TargetMachine, which is
/// not thread-safe: use one Compiler per thread.
class Compiler {
public:
  static Expected<std::unique_ptr<Compiler>> create(const Target& target);
  ~Compiler();

  const Target& target() const;
  Expected<ObjectCode> compile(const schedule::LoweredFunc& func);
  /// LLVM IR before or after optimisation, or assembly, as text.
  Expected<std::string> dump(const schedule::LoweredFunc& func, DumpStage stage);

private:
  struct Impl;
  explicit Compiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::codegen

#endif // KILN_CODEGEN_COMPILER_H
