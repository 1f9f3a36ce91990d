// What an op may do to the process that measures it: crash or hang in the
// reference computation or a kernel run, or need more memory than there is.
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/isolated_call.h"
#include "kiln/measure/measurer.h"
#include "kiln/measure/memory.h"
#include "kiln/measure/reference.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <thread>

using namespace kiln;
using namespace kiln::measure;

static ir::ComputeDAG parse(const std::string& text) {
  auto dag = ir::parse_op(text, "test.kop");
  if (!dag)
    FAIL(dag.error().render());
  return std::move(*dag);
}

/// An op that reads a tensor at an index computed from data, far outside
/// it: no static check can see it, the naive kernel crashes.
static const char* kDataIndexedOp = "op gather\ninput A : f32[4]\ninput I : i32[4]\n"
                                    "output B[i < 4] = A[I[i] * 100000000 + 50000000]\n";

TEST_CASE("call_isolated returns the child's answer, its user error, a crash or a timeout",
          "[measure][isolate]") {
  auto value = call_isolated([] { return std::string("bytes\0back", 10); }, 5, "the test", "-t");
  REQUIRE(value.ok());
  REQUIRE(*value == std::string("bytes\0back", 10));

  auto error = call_isolated(
      []() -> std::string {
        throw UserError(Error("some-id", "what went wrong", SourceLocation{"f.kop", 3, 7, "x"}));
      },
      5, "the test", "-t");
  REQUIRE_FALSE(error.ok());
  REQUIRE(error.error().id() == "some-id");
  REQUIRE(error.error().location().line == 3);

  auto crash = call_isolated(
      []() -> std::string {
        std::raise(SIGSEGV);
        return "";
      },
      5, "the crashing test", "-t");
  REQUIRE_FALSE(crash.ok());
  REQUIRE(crash.error().id() == "crashed");
  REQUIRE_THAT(crash.error().message(), Catch::Contains("the crashing test crashed: signal 11"));

  auto hang = call_isolated(
      []() -> std::string {
        std::this_thread::sleep_for(std::chrono::seconds(60));
        return "";
      },
      0.3, "the hanging test", "--its-timeout");
  REQUIRE_FALSE(hang.ok());
  REQUIRE(hang.error().id() == "timed-out");
  REQUIRE_THAT(hang.error().message(),
               Catch::Contains("within 0.3 s") && Catch::Contains("--its-timeout"));

  // A large answer comes back whole through the pipe.
  auto large = call_isolated([] { return std::string(5 << 20, 'x'); }, 30, "the test", "-t");
  REQUIRE(large.ok());
  REQUIRE(large->size() == (5u << 20));
}

TEST_CASE("the isolated reference reports a crashing or hanging op as an error",
          "[measure][isolate]") {
  Target target = codegen::host_target();
  ir::ComputeDAG gather = parse(kDataIndexedOp);
  auto crashed = Reference::create(gather, target, 1, {}, Isolation{true, 30, "--ref"});
  REQUIRE_FALSE(crashed.ok());
  REQUIRE(crashed.error().id() == "crashed");
  REQUIRE_THAT(crashed.error().message(), Catch::Contains("the reference computation of 'gather'"));

  // Seconds of work for the naive kernel.
  ir::ComputeDAG slow =
      parse("op slow\ninput A : f32[2048, 2048]\n"
            "output B[i < 2048] = sum(A[i, k] * A[k, j] for k < 2048, j < 2048)\n");
  auto timed_out = Reference::create(slow, target, 1, {}, Isolation{true, 0.2, "--ref"});
  REQUIRE_FALSE(timed_out.ok());
  REQUIRE(timed_out.error().id() == "timed-out");

  // The measurer creates its reference so, and names the tool's option.
  MeasureOptions options;
  options.reference_timeout_seconds = 0.2;
  auto measurer = ProgramMeasurer::create(slow, target, options);
  REQUIRE_FALSE(measurer.ok());
  REQUIRE_THAT(measurer.error().message(), Catch::Contains("--reference-timeout"));

  // Isolated and not, the same reference.
  ir::ComputeDAG small =
      parse("op s\ninput A : f32[3, 5]\noutput B[i < 3] = sum(A[i, k] for k < 5)\n");
  auto in_child = Reference::create(small, target, 7, {}, Isolation{true, 30, "--ref"});
  auto in_process = Reference::create(small, target, 7);
  REQUIRE(in_child.ok());
  REQUIRE(in_process.ok());
  REQUIRE(in_child->interpreter_check().checked == in_process->interpreter_check().checked);
  REQUIRE(in_child->interpreter_check().max_abs_error ==
          in_process->interpreter_check().max_abs_error);
}

TEST_CASE("compile_and_run in a child process survives a crashing kernel", "[measure][isolate]") {
  ir::ComputeDAG gather = parse(kDataIndexedOp);
  RunOptions options;
  options.isolation = Isolation{true, 30, "--timeout"};
  auto report =
      compile_and_run(gather, schedule::lower_naive(gather), codegen::host_target(), options);
  REQUIRE_FALSE(report.ok());
  REQUIRE(report.error().id() == "crashed");
  REQUIRE_THAT(report.error().message(), Catch::Contains("the kernel of 'gather' crashed"));

  ir::ComputeDAG small =
      parse("op s\ninput A : f32[3, 5]\noutput B[i < 3] = sum(A[i, k] for k < 5)\n");
  options.timing.repeat = 3;
  auto ok = compile_and_run(small, schedule::lower_naive(small), codegen::host_target(), options);
  REQUIRE(ok.ok());
  REQUIRE(ok->check.passed);
  REQUIRE(ok->check.checked == 3);
  REQUIRE(ok->timing.seconds.size() == 3);
}

TEST_CASE("an op larger than the memory is refused before anything is allocated",
          "[measure][memory]") {
  // 2^40 floats in, 2^40 floats out: 8 TiB of buffers, and the reference's
  // doubles on top.
  ir::ComputeDAG huge = parse("op huge\ninput A : f32[1048576, 1048576]\n"
                              "output B[i < 1048576, j < 1048576] = A[i, j]\n");
  REQUIRE(measurement_bytes(huge) == (std::int64_t{1} << 40) * (4 + 8 + 4 + 16));
  auto available = available_memory_bytes();
  REQUIRE(available.has_value());
  REQUIRE(*available > 0);
  auto err = check_memory(huge);
  REQUIRE(err.has_value());
  REQUIRE(err->id() == "not-enough-memory");
  REQUIRE_THAT(err->message(),
               Catch::Contains("needs about 32.0 TiB") && Catch::Contains("available"));
  auto reference = Reference::create(huge, codegen::host_target(), 1);
  REQUIRE_FALSE(reference.ok());
  REQUIRE(reference.error().id() == "not-enough-memory");
  REQUIRE_FALSE(check_memory(parse("op s\ninput A : f32[4]\noutput B[i < 4] = A[i]\n")));
  REQUIRE(format_bytes(800) == "800 B");
  REQUIRE(format_bytes(3 << 20) == "3.0 MiB");
}
