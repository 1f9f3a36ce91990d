#include "../ir/test_dags.h"

#include "kiln/measure/builder.h"
#include "kiln/measure/measurer.h"
#include "kiln/measure/reference.h"
#include "kiln/measure/runner.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"

#include <catch2/catch.hpp>

#include <sys/resource.h>

using namespace kiln;
using namespace kiln::measure;
using record::MeasureError;
using record::MeasureResult;
using schedule::For;
using schedule::ForKind;
using schedule::Store;

static RunnerOptions quick_options() {
  RunnerOptions o;
  o.timing.repeat = 2;
  o.timing.min_repeat_ms = 1;
  o.timeout_seconds = 2;
  return o;
}

static codegen::ObjectCode compile(const schedule::LoweredFunc& f) {
  auto compiler = codegen::Compiler::create(codegen::host_target());
  REQUIRE(compiler.ok());
  auto object = (*compiler)->compile(f);
  REQUIRE(object.ok());
  return *object;
}

/// A kernel for matmul's arguments whose body is `body` (hand-built, to
/// make kernels that are wrong, crash or hang).
static schedule::LoweredFunc kernel_with(const ir::ComputeDAG& dag, schedule::Stmt body) {
  schedule::LoweredFunc f = schedule::lower_naive(dag);
  f.body = std::move(body);
  return f;
}

TEST_CASE("the reference is the naive kernel checked against the interpreter",
          "[measure][reference]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  auto ref = Reference::create(dag, codegen::host_target(), 1);
  REQUIRE(ref.ok());
  REQUIRE(ref->interpreter_check().passed);
  CheckOptions impossible;
  impossible.rtol = 0;
  impossible.atol = 0;
  auto strict =
      Reference::create(test::matmul_dag(8, 8, 300), codegen::host_target(), 1, impossible);
  REQUIRE_FALSE(strict.ok());
  REQUIRE(strict.error().id() == "reference-mismatch");
}

TEST_CASE("a wrong answer is detected and recorded as such", "[measure][runner]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  auto ref = Reference::create(dag, codegen::host_target(), 1);
  auto runner = make_local_runner(dag, *ref, quick_options());
  REQUIRE(runner.ok());
  MeasureResult good = (*runner)->run(compile(schedule::lower_naive(dag)));
  REQUIRE(good.ok());
  REQUIRE(good.costs.size() == 2);
  // Writes zeros: every element wrong.
  auto zeros = For::make(
      "i", 8, ForKind::Serial,
      For::make("j", 8, ForKind::Serial,
                Store::make("C", {ir::Var::make("i"), ir::Var::make("j")}, ir::Expr(0.0))));
  MeasureResult wrong = (*runner)->run(compile(kernel_with(dag, zeros)));
  REQUIRE(wrong.error == MeasureError::WrongAnswer);
  REQUIRE_THAT(wrong.message, Catch::StartsWith("C["));
  // Leaves one element unwritten: the NaN poison catches it.
  auto partial =
      For::make("i", 63, ForKind::Serial,
                Store::make("C", {ir::Var::make("i") / 8, ir::Var::make("i") % 8},
                            ir::Load::make("C", {ir::Expr(0), ir::Expr(0)}, ir::ScalarType::F32)));
  MeasureResult unwritten = (*runner)->run(compile(kernel_with(dag, partial)));
  REQUIRE(unwritten.error == MeasureError::WrongAnswer);
}

TEST_CASE("isolated runner survives a crashing and a hanging kernel", "[measure][isolate]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  auto ref = Reference::create(dag, codegen::host_target(), 1);
  auto runner = make_isolated_runner(dag, *ref, quick_options());
  REQUIRE(runner.ok());
  // A store far outside every buffer.
  auto segfault = Store::make("C", {ir::Expr(std::int64_t{1} << 40), ir::Expr(0)}, ir::Expr(1.0));
  // A loop that would run for years.
  auto hang = For::make(
      "i", std::int64_t{1} << 50, ForKind::Serial,
      Store::make("C", {ir::Var::make("i") % 8, ir::Expr(0)},
                  ir::Load::make("C", {ir::Var::make("i") % 8, ir::Expr(0)}, ir::ScalarType::F32) +
                      1.0));
  codegen::ObjectCode good = compile(schedule::lower_naive(dag));

  MeasureResult crashed = (*runner)->run(compile(kernel_with(dag, segfault)));
  REQUIRE(crashed.error == MeasureError::RuntimeCrash);
  REQUIRE_THAT(crashed.message, Catch::Contains("signal 11"));
  MeasureResult after_crash = (*runner)->run(good);
  REQUIRE(after_crash.ok());

  MeasureResult hung = (*runner)->run(compile(kernel_with(dag, hang)));
  REQUIRE(hung.error == MeasureError::Timeout);
  MeasureResult after_hang = (*runner)->run(good);
  REQUIRE(after_hang.ok());
}

TEST_CASE("a batch of schedules is measured in order, each checked", "[measure][measurer]") {
  ir::ComputeDAG dag = test::matmul_dag(16, 16, 16);
  MeasureOptions options;
  options.isolate = false;
  options.runner = quick_options();
  options.build_threads = 2;
  auto m = ProgramMeasurer::create(dag, codegen::host_target(), options);
  REQUIRE(m.ok());
  schedule::State naive(dag), tiled(dag);
  tiled.split("C", "j", {8});
  tiled.vectorize("C", "j.1");
  auto results = (*m)->measure(std::vector<schedule::State>{naive, tiled});
  REQUIRE(results.size() == 2);
  REQUIRE(results[0].ok());
  REQUIRE(results[1].ok());
  REQUIRE(results[1].build_seconds > 0);
  REQUIRE((*m)->stats().trials == 2);
  REQUIRE((*m)->stats().errors() == 0);
  REQUIRE((*m)->stats().by_error[static_cast<size_t>(MeasureError::None)] == 2);
}

TEST_CASE("a worker that cannot start is a clear error", "[measure][isolate]") {
  ir::ComputeDAG dag = test::matmul_dag(4, 4, 4);
  auto ref = Reference::create(dag, codegen::host_target(), 1);
  REQUIRE(ref.ok());
  // With no file descriptors left, the pipes to the worker cannot be made.
  rlimit saved{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit none = saved;
  none.rlim_cur = 0;
  REQUIRE(setrlimit(RLIMIT_NOFILE, &none) == 0);
  auto runner = make_isolated_runner(dag, *ref, quick_options());
  REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
  REQUIRE_FALSE(runner.ok());
  REQUIRE(runner.error().id() == "worker-error");
  REQUIRE_THAT(runner.error().message(), Catch::Contains("pipe"));
}

TEST_CASE("only a slow checked run as long as a timed repeat replaces timing",
          "[measure][runner]") {
  RunnerOptions o;
  o.slow_cutoff_ratio = 4;
  o.timing.min_repeat_ms = 10;
  // A 100 ms random kernel when the best is 5 ms: its one run is the label.
  CHECK(timed_by_checked_run(0.100, 0.005, o));
  // A 60 us cold first call of a kernel whose warm calls may be as fast as
  // the 16 us best: it is timed fully.
  CHECK_FALSE(timed_by_checked_run(60e-6, 16e-6, o));
  // Not slow enough, no best yet, or the cutoff off: timed fully.
  CHECK_FALSE(timed_by_checked_run(0.015, 0.005, o));
  CHECK_FALSE(timed_by_checked_run(0.100, 0, o));
  o.slow_cutoff_ratio = 0;
  CHECK_FALSE(timed_by_checked_run(0.100, 0.005, o));
}

TEST_CASE("a checked run too long to time again within the timeout is the timing",
          "[measure][runner]") {
  RunnerOptions o;
  o.timeout_seconds = 10;
  o.timing.repeat = 3;
  // A 4 s naive schedule, the first trial (no best yet): it and 3 more runs
  // would be 16 s, past the timeout; its one run is the timing.
  CHECK(timed_by_checked_run(4.0, 0, o));
  // 1 s: 4 s in all, under half the timeout: timed fully.
  CHECK_FALSE(timed_by_checked_run(1.0, 0, o));
  // A longer timeout makes room for the full timing.
  o.timeout_seconds = 60;
  CHECK_FALSE(timed_by_checked_run(4.0, 0, o));
  // No timeout (0): only the slow cutoff applies.
  o.timeout_seconds = 0;
  CHECK_FALSE(timed_by_checked_run(4.0, 0, o));
}
