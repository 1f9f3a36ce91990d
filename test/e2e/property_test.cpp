// The schedule property test: for every op in ops/, at small shapes, many
// seeded random step sequences (random_schedule.h), each lowered, compiled,
// run and compared element by element with the interpreter. Any wrong
// answer, crash or compile failure is a bug in kiln: the failure message
// names the op, the seed and the steps, and writes the schedule file that
// `kiln run` replays.
//
// KILN_PROPERTY_SEEDS=N runs N sequences per op instead of the default;
// KILN_PROPERTY_FIRST_SEED=S starts at seed S (to replay one failure, set
// both: KILN_PROPERTY_FIRST_SEED=123 KILN_PROPERTY_SEEDS=1).
#include "kernel_check.h"
#include "random_schedule.h"
#include "small_shapes.h"

#include "kiln/ir/parser.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

using namespace kiln;

namespace {

/// Sequences per op by default: 9 ops × 350 = 3150 in all.
constexpr int kDefaultSeeds = 350;
/// Stop an op's run after this many failures (they are usually one bug).
constexpr int kMaxReportedFailures = 5;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text)
    return fallback;
  return std::strtoull(text, nullptr, 10);
}

/// Every fourth seed runs on the edge shapes (extents of 1, primes).
bool uses_edge_shapes(std::uint64_t seed) {
  return seed % 4 == 3;
}

/// Where the schedule of a failing (or the current) sequence is written.
std::string schedule_path(const std::string& op, const std::string& what) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("kiln-property-{}-{}.json", op, what))
      .string();
}

void check_random_schedules(const std::string& op) {
  const std::uint64_t seeds = env_number("KILN_PROPERTY_SEEDS", kDefaultSeeds);
  const std::uint64_t first = env_number("KILN_PROPERTY_FIRST_SEED", 0);
  const ir::ParamOverrides& small = test::small_shapes().at(op);
  const ir::ParamOverrides& edge = test::edge_shapes().at(op);
  auto small_dag = ir::parse_op_file(test::op_file(op).string(), small);
  auto edge_dag = ir::parse_op_file(test::op_file(op).string(), edge);
  if (!small_dag)
    FAIL(small_dag.error().render());
  if (!edge_dag)
    FAIL(edge_dag.error().render());

  test::KernelChecker& checker = test::KernelChecker::shared();
  test::RandomScheduleStats stats;
  int failures = 0;
  for (std::uint64_t seed = first; seed < first + seeds; ++seed) {
    const bool edge_shape = uses_edge_shapes(seed);
    const ir::ComputeDAG& dag = edge_shape ? *edge_dag : *small_dag;
    const ir::ParamOverrides& shape = edge_shape ? edge : small;
    schedule::State state = test::random_schedule(dag, seed, &stats);
    // Written before the run and shown if the kernel crashes the process
    // (Catch2 reports the messages in scope with the fatal signal).
    INFO(fmt::format("op {} ({} shapes), seed {}\n{}", op, edge_shape ? "edge" : "small", seed,
                     test::reproduce_hint(op, shape, state, schedule_path(op, "current"))));
    test::KernelOutcome outcome = checker.check(dag, state);
    if (outcome.ok())
      continue;
    std::string path = schedule_path(op, std::to_string(seed));
    FAIL_CHECK(fmt::format("{}\nop {}, seed {}\n{}", outcome.failure, op, seed,
                           test::reproduce_hint(op, shape, state, path)));
    if (++failures >= kMaxReportedFailures)
      break;
  }

  // Refusal is legal, but a generator whose steps are mostly refused tests
  // little: at least 80% of what it proposes must apply.
  std::string refusals;
  for (const auto& [tag, n] : stats.refused_by_tag)
    refusals += fmt::format("  {}: {} of {} refused, e.g. \"{}\"\n", tag, n,
                            stats.proposed_by_tag[tag], stats.example_refusal[tag]);
  std::string summary = fmt::format(
      "{}: {} random schedules, {} steps proposed, {} refused ({:.1f}%)\n{}", op, seeds,
      stats.proposed, stats.refused, 100.0 * stats.refused / std::max(1, stats.proposed), refusals);
  fmt::print("{}", summary);
  INFO(summary);
  CHECK(stats.refused * 5 <= stats.proposed);
}

const std::vector<std::string>& property_ops() {
  static const std::vector<std::string> ops = {
      "batch_matmul", "conv2d_nchw", "dense_bias_relu", "depthwise_conv2d", "matmul",
      "max_pool2d",   "row_sum",     "softmax",         "transpose",
  };
  return ops;
}

} // namespace

TEST_CASE("every op in ops/ has a random-schedule test", "[e2e][property]") {
  std::set<std::string> files;
  for (const auto& path : test::op_files())
    files.insert(path.stem().string());
  std::set<std::string> tested(property_ops().begin(), property_ops().end());
  INFO("add the op to property_ops() and a TEST_CASE for it in test/e2e/property_test.cpp");
  REQUIRE(files == tested);
}

#define KILN_PROPERTY_TEST(OP)                                                                     \
  TEST_CASE("random schedules of " OP " match the interpreter", "[e2e][property]") {               \
    check_random_schedules(OP);                                                                    \
  }

KILN_PROPERTY_TEST("batch_matmul")
KILN_PROPERTY_TEST("conv2d_nchw")
KILN_PROPERTY_TEST("dense_bias_relu")
KILN_PROPERTY_TEST("depthwise_conv2d")
KILN_PROPERTY_TEST("matmul")
KILN_PROPERTY_TEST("max_pool2d")
KILN_PROPERTY_TEST("row_sum")
KILN_PROPERTY_TEST("softmax")
KILN_PROPERTY_TEST("transpose")
