// The schedule property test: for every op in ops/, at small shapes, many
// seeded random step sequences (random_schedule.h), each lowered, compiled,
// run and compared element by element with the interpreter. Any wrong
// answer, crash or compile failure is a bug in kiln: the failure message
// names the op, the seed and the steps, and writes the schedule file that
// `kiln run` replays.
//
// KILN_PROPERTY_SEEDS=N runs N sequences per op instead of the default;
// KILN_PROPERTY_FIRST_SEED=S starts at seed S (to replay one failure, set
// both: KILN_PROPERTY_FIRST_SEED=123 KILN_PROPERTY_SEEDS=1);
// KILN_PROPERTY_MAX_STEPS=M grows schedules of up to M proposals (default
// 14) and KILN_PROPERTY_WILD=P makes P percent of them wild (default 10).
// Changing either changes the schedule every seed gives.
#include "kernel_check.h"
#include "random_schedule.h"
#include "small_shapes.h"

#include "kiln/ir/parser.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

using namespace kiln;

namespace {

/// Stop an op's run after this many failures (they are usually one bug).
constexpr int kMaxReportedFailures = 5;

/// Which shapes a seed runs on: of every four seeds, two use the small
/// shapes, one the edge shapes (extents of 1, primes), one a random shape.
enum class ShapeKind { Small, Edge, Random };

ShapeKind shape_kind(std::uint64_t seed) {
  switch (seed % 4) {
  case 2:
    return ShapeKind::Random;
  case 3:
    return ShapeKind::Edge;
  default:
    return ShapeKind::Small;
  }
}

std::string_view shape_kind_name(ShapeKind k) {
  return k == ShapeKind::Small ? "small" : k == ShapeKind::Edge ? "edge" : "random";
}

/// A random small shape: every parameter the op declares drawn from a small
/// range (windows 1..4, strides 1..3, padding 0..2, others 1..12), kept when
/// the op accepts it and stays cheap for the interpreter.
struct Shape {
  ir::ParamOverrides overrides;
  ir::ComputeDAG dag;
};

std::optional<Shape> random_shape(const std::string& op, std::uint64_t seed) {
  std::ifstream file(test::op_file(op));
  std::stringstream text;
  text << file.rdbuf();
  auto params = ir::parse_op_params(text.str(), op);
  if (!params)
    return std::nullopt;
  std::mt19937_64 rng(seed * 7919 + 17);
  auto draw = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  // Padding may be 0; everything else is at least 1.
  auto max_value = [](const std::string& name) -> std::int64_t {
    if (name == "pad")
      return 2;
    if (name == "stride")
      return 3;
    if (name == "R" || name == "S" || name == "KH" || name == "KW")
      return 4;
    return 12;
  };
  for (int attempt = 0; attempt < 64; ++attempt) {
    ir::ParamOverrides overrides;
    for (const ir::ParamDecl& p : *params) {
      if (p.derived)
        continue;
      std::int64_t v = draw(p.name == "pad" ? 0 : 1, max_value(p.name));
      overrides.emplace_back(p.name, std::to_string(v));
    }
    auto dag = ir::parse_op(text.str(), op, overrides);
    if (dag && dag->flop_count() <= 2e4)
      return Shape{std::move(overrides), std::move(*dag)};
  }
  return std::nullopt;
}

/// Where the schedule of a failing (or the current) sequence is written.
std::string schedule_path(const std::string& op, const std::string& what) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("kiln-property-{}-{}.json", op, what))
      .string();
}

void check_random_schedules(const std::string& op, std::uint64_t default_seeds) {
  const std::uint64_t seeds = test::env_number("KILN_PROPERTY_SEEDS", default_seeds);
  const std::uint64_t first = test::env_number("KILN_PROPERTY_FIRST_SEED", 0);
  test::RandomScheduleOptions options;
  options.max_proposals = static_cast<int>(test::env_number(
      "KILN_PROPERTY_MAX_STEPS", static_cast<std::uint64_t>(options.max_proposals)));
  options.wild = static_cast<double>(test::env_number("KILN_PROPERTY_WILD", 10)) / 100.0;
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
    ShapeKind kind = shape_kind(seed);
    std::optional<Shape> drawn = kind == ShapeKind::Random ? random_shape(op, seed) : std::nullopt;
    if (kind == ShapeKind::Random && !drawn)
      kind = ShapeKind::Small;
    const ir::ComputeDAG& dag = drawn                     ? drawn->dag
                                : kind == ShapeKind::Edge ? *edge_dag
                                                          : *small_dag;
    const ir::ParamOverrides& shape = drawn                     ? drawn->overrides
                                      : kind == ShapeKind::Edge ? edge
                                                                : small;
    schedule::State state = test::random_schedule(dag, seed, &stats, options);
    // Written before the run and shown if the kernel crashes the process
    // (Catch2 reports the messages in scope with the fatal signal).
    INFO(fmt::format("op {} ({} shape), seed {}\n{}", op, shape_kind_name(kind), seed,
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

/// Sequences per op by default, 3650 in all: fewer for the convolutions,
/// whose seven-deep nests take longest to compile, so that the longest test
/// stays short.
const std::map<std::string, std::uint64_t>& property_ops() {
  static const std::map<std::string, std::uint64_t> ops = {
      {"batch_matmul", 400}, {"conv2d_nchw", 250},     {"conv2d_nchwc", 200},
      {"conv2d_nhwc", 200},  {"dense_bias_relu", 400}, {"depthwise_conv2d", 300},
      {"layer_norm", 300},   {"matmul", 400},          {"max_pool2d", 300},
      {"row_sum", 400},      {"softmax", 400},         {"transpose", 400},
  };
  return ops;
}

} // namespace

TEST_CASE("every op in ops/ has a random-schedule test", "[e2e][property]") {
  std::set<std::string> files;
  for (const auto& path : test::op_files())
    files.insert(path.stem().string());
  std::set<std::string> tested;
  for (const auto& [op, seeds] : property_ops())
    tested.insert(op);
  INFO("add the op to property_ops() and a TEST_CASE for it in test/e2e/property_test.cpp");
  REQUIRE(files == tested);
}

TEST_CASE("random schedules are the same for the same seed", "[e2e][property]") {
  auto dag = ir::parse_op_file(test::op_file("conv2d_nchw").string(),
                               test::small_shapes().at("conv2d_nchw"));
  REQUIRE(dag.ok());
  std::set<std::string> distinct;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::string a = test::random_schedule(*dag, seed).to_string();
    std::string b = test::random_schedule(*dag, seed).to_string();
    REQUIRE(a == b);
    distinct.insert(a);
  }
  CHECK(distinct.size() >= 18);
}

#define KILN_PROPERTY_TEST(OP)                                                                     \
  TEST_CASE("random schedules of " OP " match the interpreter", "[e2e][property]") {               \
    check_random_schedules(OP, property_ops().at(OP));                                             \
  }

KILN_PROPERTY_TEST("batch_matmul")
KILN_PROPERTY_TEST("conv2d_nchw")
KILN_PROPERTY_TEST("conv2d_nchwc")
KILN_PROPERTY_TEST("conv2d_nhwc")
KILN_PROPERTY_TEST("dense_bias_relu")
KILN_PROPERTY_TEST("depthwise_conv2d")
KILN_PROPERTY_TEST("layer_norm")
KILN_PROPERTY_TEST("matmul")
KILN_PROPERTY_TEST("max_pool2d")
KILN_PROPERTY_TEST("row_sum")
KILN_PROPERTY_TEST("softmax")
KILN_PROPERTY_TEST("transpose")
