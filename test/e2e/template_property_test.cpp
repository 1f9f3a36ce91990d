// The template property test: for every op in ops/ that a template fits,
// 1000 seeded random configs of the template's knob space, each turned into
// steps, replayed into a State, lowered, compiled, run and compared element
// by element with the interpreter. A template promises that every config of
// its space is a valid schedule, so a refused step is a failure too; the
// message names the op, the knobs, and writes the schedule file `kiln run`
// replays.
//
// Configs alternate between the small shapes of small_shapes.h (extents
// with no common factors: few factorizations, tails everywhere in the
// consumers) and composite shapes with many factorizations. Each op's
// configs are split over several test cases, so that `ctest -j2` runs them
// in parallel.
//
// KILN_TEMPLATE_CONFIGS=N checks N configs per op instead of 1000;
// KILN_TEMPLATE_SEED=S changes the seed (the default is 1).
#include "kernel_check.h"
#include "small_shapes.h"

#include "kiln/ir/parser.h"
#include "kiln/schedule/state.h"
#include "kiln/space/templates.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>

using namespace kiln;

namespace {

/// Extents with many factors, small enough for the interpreter.
const std::map<std::string, ir::ParamOverrides>& composite_shapes() {
  static const std::map<std::string, ir::ParamOverrides> shapes = {
      {"matmul", {{"M", "24"}, {"N", "32"}, {"K", "12"}}},
      {"dense_bias_relu", {{"BATCH", "4"}, {"IN", "12"}, {"OUT", "24"}}},
      {"conv2d_nchw", {{"N", "1"}, {"C", "2"}, {"H", "6"}, {"W", "8"}, {"K", "4"}}},
  };
  return shapes;
}

/// The template each op's test uses: the one match_template picks.
const std::map<std::string, std::string>& template_of() {
  static const std::map<std::string, std::string> t = {
      {"matmul", "matmul"}, {"dense_bias_relu", "dense"}, {"conv2d_nchw", "conv2d_nchw"}};
  return t;
}

// Fixed machine parameters: the space, and so every seed's config, is the
// same on every machine.
const space::SpaceParams kParams{.vector_lanes = 16, .cores = 2};

struct ShapeTemplate {
  ir::ParamOverrides shape;
  ir::ComputeDAG dag;
  std::unique_ptr<space::Template> templ;
};

ShapeTemplate bind(const std::string& op, const ir::ParamOverrides& shape) {
  auto dag = ir::parse_op_file(test::op_file(op).string(), shape);
  if (!dag)
    FAIL(dag.error().render());
  auto t = space::match_template(*dag, kParams);
  if (!t)
    FAIL(t.error().render());
  REQUIRE((*t)->name() == template_of().at(op));
  return ShapeTemplate{shape, *dag, std::move(*t)};
}

std::string schedule_path(const std::string& op, std::uint64_t index) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("kiln-template-property-{}-{}.json", op, index))
      .string();
}

/// Checks configs [begin, end) of the op's seeded sequence.
void check_template_configs(const std::string& op, int part, int parts) {
  const std::uint64_t count = test::env_number("KILN_TEMPLATE_CONFIGS", 1000);
  const std::uint64_t seed = test::env_number("KILN_TEMPLATE_SEED", 1);
  ShapeTemplate shapes[2] = {bind(op, test::small_shapes().at(op)),
                             bind(op, composite_shapes().at(op))};
  // One stream per part, so a part's configs do not depend on the others.
  std::mt19937_64 rng(seed * 1000003 + static_cast<std::uint64_t>(part));
  const std::uint64_t begin = count * part / parts, end = count * (part + 1) / parts;
  test::KernelChecker& checker = test::KernelChecker::shared();
  int failures = 0;
  for (std::uint64_t i = begin; i < end && failures < 5; ++i) {
    ShapeTemplate& s = shapes[i % 2];
    const space::ConfigSpace& sp = s.templ->space();
    space::KnobConfig config = sp.sample(rng);
    REQUIRE(sp.valid(config));
    REQUIRE(sp.at(sp.index_of(config)) == config);
    std::string where =
        fmt::format("op {} ({}), config {} of seed {}: template {} {}", op,
                    test::set_flags(s.shape), i, seed, s.templ->name(), sp.describe(config));
    auto state = schedule::State::replay(s.dag, s.templ->steps(config));
    if (!state) {
      FAIL_CHECK(fmt::format("{}\nthe template made a config whose steps are refused: {}", where,
                             state.error().render()));
      ++failures;
      continue;
    }
    INFO(fmt::format("{}\n{}", where, test::reproduce_hint(op, s.shape, *state)));
    test::KernelOutcome outcome = checker.check(s.dag, *state);
    if (outcome.ok())
      continue;
    FAIL_CHECK(fmt::format("{}\n{}\n{}", outcome.failure, where,
                           test::reproduce_hint(op, s.shape, *state, schedule_path(op, i))));
    ++failures;
  }
  fmt::print("{}: template configs {}..{} checked\n", op, begin, end);
}

} // namespace

TEST_CASE("every op that a template fits has a template property test",
          "[e2e][property][template]") {
  std::set<std::string> fitting;
  for (const auto& path : test::op_files()) {
    std::string op = path.stem().string();
    auto dag = ir::parse_op_file(path.string(), test::small_shapes().at(op));
    REQUIRE(dag.ok());
    if (space::match_template(*dag, kParams))
      fitting.insert(op);
  }
  std::set<std::string> tested;
  for (const auto& [op, t] : template_of())
    tested.insert(op);
  INFO("add the op to composite_shapes(), template_of() and TEST_CASEs in "
       "test/e2e/template_property_test.cpp");
  REQUIRE(fitting == tested);
}

// Each op in parts, so that ctest runs them in parallel; a conv2d config
// compiles about three times slower than a matmul one, so it has more parts.
TEST_CASE("template configs of matmul (part 1 of 2)", "[e2e][property][template]") {
  check_template_configs("matmul", 0, 2);
}
TEST_CASE("template configs of matmul (part 2 of 2)", "[e2e][property][template]") {
  check_template_configs("matmul", 1, 2);
}
TEST_CASE("template configs of dense_bias_relu (part 1 of 2)", "[e2e][property][template]") {
  check_template_configs("dense_bias_relu", 0, 2);
}
TEST_CASE("template configs of dense_bias_relu (part 2 of 2)", "[e2e][property][template]") {
  check_template_configs("dense_bias_relu", 1, 2);
}
TEST_CASE("template configs of conv2d_nchw (part 1 of 4)", "[e2e][property][template]") {
  check_template_configs("conv2d_nchw", 0, 4);
}
TEST_CASE("template configs of conv2d_nchw (part 2 of 4)", "[e2e][property][template]") {
  check_template_configs("conv2d_nchw", 1, 4);
}
TEST_CASE("template configs of conv2d_nchw (part 3 of 4)", "[e2e][property][template]") {
  check_template_configs("conv2d_nchw", 2, 4);
}
TEST_CASE("template configs of conv2d_nchw (part 4 of 4)", "[e2e][property][template]") {
  check_template_configs("conv2d_nchw", 3, 4);
}
