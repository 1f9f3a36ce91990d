// Test-only: compile a schedule, run it, and compare every element of its
// outputs with the interpreter. One Compiler and one Jit are reused for every
// kernel (creating them costs tens of milliseconds).
//
// Besides the answer, a run checks what the checker cannot see: the kernel
// runs on copies of its arguments surrounded by canary bytes, so a write
// past either end of a buffer, or any write to an input, is a failure too.
#ifndef KILN_TEST_E2E_KERNEL_CHECK_H
#define KILN_TEST_E2E_KERNEL_CHECK_H

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/jit.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/checker.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/schedule/state.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace kiln::test {

struct KernelOutcome {
  /// Empty when the kernel compiled, ran and matched; otherwise what went
  /// wrong ("lowering threw: …", "compile error: …", "wrong answer: …",
  /// "wrote past the end of C", …).
  std::string failure;
  measure::CheckReport check;

  bool ok() const { return failure.empty(); }
};

class KernelChecker {
public:
  KernelChecker();
  ~KernelChecker();

  /// Lowers `state` and checks it against the interpreter run on `dag` (the
  /// op as parsed, before any cache stage was added).
  KernelOutcome check(const ir::ComputeDAG& dag, const schedule::State& state);
  KernelOutcome check(const ir::ComputeDAG& dag, const schedule::LoweredFunc& func);

  /// The checker every test case of this process shares.
  static KernelChecker& shared();

private:
  std::unique_ptr<codegen::Compiler> compiler_;
  std::unique_ptr<codegen::Jit> jit_;
};

/// How to reproduce a schedule of an op file from the command line: the
/// schedule file (written to `path` when it is not empty) and the `kiln run`
/// command, plus the steps as JSON.
std::string reproduce_hint(const std::string& op, const ir::ParamOverrides& shape,
                           const schedule::State& state, const std::string& path = "");

/// A number from the environment (a test's knob such as the number of
/// seeds), or `fallback` when the variable is unset or empty.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 10) : fallback;
}

} // namespace kiln::test

#endif
