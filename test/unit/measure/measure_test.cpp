#include "../ir/test_dags.h"

#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/checker.h"
#include "kiln/measure/run.h"
#include "kiln/measure/timer.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

using namespace kiln;

TEST_CASE("inputs are seeded and outputs poisoned", "[measure][buffers]") {
  ir::ComputeDAG dag = test::matmul_dag(4, 4, 4);
  measure::ArgumentBuffers a(dag, 3), b(dag, 3), c(dag, 4);
  REQUIRE(a.size() == 3);
  REQUIRE(a.value(0, 5) == b.value(0, 5));
  REQUIRE(a.value(0, 5) != c.value(0, 5));
  REQUIRE(std::isnan(a.value(2, 0)));
  for (int i = 0; i < a.size(); ++i)
    REQUIRE(reinterpret_cast<std::uintptr_t>(a.pointers()[i]) % 64 == 0);
}

TEST_CASE("the checker finds unwritten and wrong elements", "[measure][checker]") {
  ir::ComputeDAG dag = test::matmul_dag(3, 3, 3);
  measure::ArgumentBuffers buffers(dag, 1);
  measure::CheckReport untouched = measure::check_outputs(dag, buffers);
  REQUIRE_FALSE(untouched.passed);
  REQUIRE_THAT(untouched.first_mismatch, Catch::Contains("C[0, 0]: got nan"));

  // Write the right answer, then break one element.
  auto* a = static_cast<float*>(buffers.pointers()[0]);
  auto* b = static_cast<float*>(buffers.pointers()[1]);
  auto* c = static_cast<float*>(buffers.pointers()[2]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      float acc = 0;
      for (int k = 0; k < 3; ++k)
        acc += a[i * 3 + k] * b[k * 3 + j];
      c[i * 3 + j] = acc;
    }
  REQUIRE(measure::check_outputs(dag, buffers).passed);
  c[7] += 0.01f;
  measure::CheckReport wrong = measure::check_outputs(dag, buffers);
  REQUIRE_FALSE(wrong.passed);
  REQUIRE_THAT(wrong.first_mismatch, Catch::StartsWith("C[2, 1]"));
  REQUIRE(wrong.checked == 9);
}

TEST_CASE("compare_outputs catches wrong, NaN and infinite elements of a whole output",
          "[measure][checker]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 2);
  measure::ArgumentBuffers buffers(dag, 1);
  auto* c = static_cast<float*>(buffers.pointers()[2]);
  std::vector<double> want(64);
  for (int i = 0; i < 64; ++i)
    want[i] = c[i] = static_cast<float>(i - 20);
  std::vector<std::vector<double>> expected{want};
  measure::CheckReport same = measure::compare_outputs(dag, buffers, expected);
  REQUIRE(same.passed);
  REQUIRE(same.checked == 64);
  REQUIRE(same.max_abs_error == 0);

  struct Case {
    float got;
    std::string says;
  };
  for (const Case& k :
       {Case{7.5f, "got 7.5"}, Case{std::nanf(""), "got nan"}, Case{INFINITY, "got inf"}}) {
    c[45] = k.got;
    measure::CheckReport r = measure::compare_outputs(dag, buffers, expected);
    REQUIRE_FALSE(r.passed);
    REQUIRE_THAT(r.first_mismatch, Catch::StartsWith("C[5, 5]") && Catch::Contains(k.says));
    REQUIRE(r.checked == 64);
    c[45] = 25;
  }
  // An infinite expected value matches only the same infinity.
  expected[0][3] = want[3] = INFINITY;
  c[3] = 1e30f;
  REQUIRE_FALSE(measure::compare_outputs(dag, buffers, expected).passed);
  c[3] = INFINITY;
  REQUIRE(measure::compare_outputs(dag, buffers, expected).passed);
}

TEST_CASE("large outputs are checked on a seeded sample", "[measure][checker]") {
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  measure::ArgumentBuffers buffers(dag, 1);
  measure::CheckOptions options;
  options.full_check_max_flops = 1000;
  options.sample_points = 100;
  measure::CheckReport r = measure::check_outputs(dag, buffers, options);
  REQUIRE(r.checked == 100);
  REQUIRE(r.total == 64 * 64);
  REQUIRE(r.sampled());
}

TEST_CASE("timer raises the number of calls to reach min_repeat_ms", "[measure][timer]") {
  int calls = 0;
  measure::TimingOptions options;
  options.repeat = 3;
  options.min_repeat_ms = 1;
  measure::Timing t = measure::time_function([&] { ++calls; }, options);
  REQUIRE(t.seconds.size() == 3);
  REQUIRE(t.number > 1);
  REQUIRE(calls >= 3 * t.number);
  REQUIRE(t.min() <= t.median());
}

TEST_CASE("timer keeps its first long-enough repeat whatever the guessed call time",
          "[measure][timer]") {
  measure::TimingOptions options;
  options.warmup = 0;
  options.repeat = 2;
  options.min_repeat_ms = 1;
  volatile double sink = 0;
  auto spin = [&] {
    for (int i = 0; i < 2000; ++i)
      sink = sink + 1;
  };
  for (double guess : {10.0, 1e-9, 0.0}) {
    measure::Timing t = measure::time_function(spin, options, guess);
    REQUIRE(t.seconds.size() == 2);
    // The kept first repeat passed min_repeat_ms with this number of calls.
    REQUIRE(t.seconds[0] * t.number >= options.min_repeat_ms / 1000.0);
  }
}

TEST_CASE("compile_and_run checks and times a naive kernel", "[measure][run]") {
  ir::ComputeDAG dag = test::matmul_dag(16, 8, 4);
  measure::RunOptions options;
  options.timing.repeat = 2;
  options.timing.min_repeat_ms = 1;
  auto report =
      measure::compile_and_run(dag, schedule::lower_naive(dag), codegen::host_target(), options);
  REQUIRE(report.ok());
  REQUIRE(report->check.passed);
  REQUIRE(report->check.checked == 16 * 8);
  REQUIRE(report->gflops() > 0);
}
