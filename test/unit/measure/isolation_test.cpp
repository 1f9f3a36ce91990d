// What an op may do to the process that measures it: crash or hang in the
// reference computation or a kernel run (both in kiln-worker), or need more
// memory than there is.
#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/bytes.h"
#include "kiln/measure/isolation.h"
#include "kiln/measure/measurer.h"
#include "kiln/measure/memory.h"
#include "kiln/measure/reference.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

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

TEST_CASE("the worker's user error, and a large answer, come back whole", "[measure][isolate]") {
  Target target = codegen::host_target();
  // I[i] + 4 leaves A for some seeded I: the naive kernel reads beside A
  // without crashing, the interpreter refuses it with an Error of its own.
  ir::ComputeDAG beside = parse("op beside\ninput A : f32[4]\ninput I : i32[4]\n"
                                "output B[i < 4] = A[I[i] + 4]\n");
  auto in_worker = Reference::create(beside, target, 1, {}, Isolation{true, 30, "--ref"});
  auto in_process = Reference::create(beside, target, 1);
  REQUIRE_FALSE(in_worker.ok());
  REQUIRE_FALSE(in_process.ok());
  REQUIRE(in_worker.error().id() == "out-of-bounds");
  REQUIRE(in_worker.error().message() == in_process.error().message());

  // 8 MiB of reference outputs through the pipe, the same as computed here.
  ir::ComputeDAG large = parse("op large\ninput A : f32[1024, 1024]\n"
                               "output B[i < 1024, j < 1024] = A[i, j] * 2.0\n");
  auto far = Reference::create(large, target, 3, {}, Isolation{true, 60, "--ref"});
  auto near = Reference::create(large, target, 3);
  REQUIRE(far.ok());
  REQUIRE(near.ok());
  ByteWriter far_bytes, near_bytes;
  far->write(far_bytes);
  near->write(near_bytes);
  std::string bytes = std::move(far_bytes).take();
  REQUIRE(bytes.size() > (8u << 20));
  REQUIRE(bytes == std::move(near_bytes).take());
  // And a reference read back from its bytes is the same reference.
  ByteReader r(bytes);
  ByteWriter again;
  Reference::read(r).write(again);
  REQUIRE(r.at_end());
  REQUIRE(std::move(again).take() == bytes);
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

TEST_CASE("a kernel in the worker runs on the caller's threads", "[measure][isolate]") {
  // The worker is a process of its own, whose runtime would default to
  // every core: each job carries the caller's thread count (the tuner's
  // trials and the reference take the same path as this call).
  ir::ComputeDAG small =
      parse("op s\ninput A : f32[64, 8]\noutput B[i < 64] = sum(A[i, k] for k < 8)\n");
  schedule::LoweredFunc func = schedule::lower_naive(small);
  RunOptions options;
  options.isolation = Isolation{true, 30, "--timeout"};
  options.timing.repeat = 1;
  const int saved = kiln_rt_num_threads();
  for (int threads : {1, 3}) {
    kiln_rt_set_num_threads(threads);
    auto report = compile_and_run(small, func, codegen::host_target(), options);
    REQUIRE(report.ok());
    CHECK(report->check.passed);
    CHECK(report->threads == threads);
  }
  kiln_rt_set_num_threads(saved);
}
