// The sketch-space property test: for every op in ops/, 1000 seeded configs
// of its Ansor-style sketch space (random annotation, and mutations and
// crossovers of them, as the evolutionary search makes), each replayed into
// a State, lowered, compiled, run and compared element by element with the
// interpreter. The space promises that every config it makes is a valid
// schedule, so a refused step is a failure here too, as is a wrong answer,
// a crash or a compile error: the message names the op, the seed and writes
// the schedule file `kiln run` replays.
//
// Configs alternate between two shapes: the small shapes of small_shapes.h
// (extents with no common factors, so tiles are mostly 1 and tails are
// everywhere) and the composite shapes below, whose extents have many
// factorisations, so the sampled tiles, fusions and vector loops vary.
//
// KILN_SKETCH_CONFIGS=N checks N configs per op instead of 1000;
// KILN_SKETCH_SEED=S changes the seed (the default is 1).
#include "kernel_check.h"
#include "small_shapes.h"

#include "kiln/ir/parser.h"
#include "kiln/schedule/state.h"
#include "kiln/space/sketch.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace kiln;

namespace {

/// Shapes whose extents have many factors (12, 16, 24, 32), small enough for
/// the interpreter to check every element in well under a millisecond. The
/// row reductions, and the batch-1 dense layer's, are long enough for the
/// rfactor sketches (at least Rfactor::kMinExtent = 64; 72 leaves a tail).
const std::map<std::string, ir::ParamOverrides>& composite_shapes() {
  static const std::map<std::string, ir::ParamOverrides> shapes = {
      {"matmul", {{"M", "24"}, {"N", "32"}, {"K", "12"}}},
      {"batch_matmul", {{"BATCH", "2"}, {"M", "12"}, {"N", "16"}, {"K", "8"}}},
      {"dense_bias_relu", {{"BATCH", "1"}, {"IN", "72"}, {"OUT", "24"}}},
      {"conv2d_nchw", {{"N", "1"}, {"C", "4"}, {"H", "8"}, {"W", "8"}, {"K", "8"}}},
      {"conv2d_nchwc", {{"N", "1"}, {"CB", "2"}, {"H", "8"}, {"W", "8"}, {"KB", "2"}, {"VB", "4"}}},
      {"conv2d_nhwc", {{"N", "1"}, {"C", "4"}, {"H", "8"}, {"W", "8"}, {"K", "16"}}},
      {"depthwise_conv2d", {{"N", "1"}, {"C", "4"}, {"H", "8"}, {"W", "12"}}},
      {"max_pool2d", {{"N", "1"}, {"C", "4"}, {"H", "12"}, {"W", "8"}}},
      {"softmax", {{"M", "4"}, {"N", "72"}}},
      {"layer_norm", {{"M", "6"}, {"N", "80"}}},
      {"transpose", {{"M", "16"}, {"N", "24"}}},
      {"row_sum", {{"M", "3"}, {"N", "96"}}},
  };
  return shapes;
}

struct ShapeSpace {
  ir::ParamOverrides shape;
  ir::ComputeDAG dag;
  space::SketchSpace space;
};

ShapeSpace make_space(const std::string& op, const ir::ParamOverrides& shape) {
  auto dag = ir::parse_op_file(test::op_file(op).string(), shape);
  if (!dag)
    FAIL(dag.error().render());
  // Fixed machine parameters: the space, and so every seed's config, is the
  // same on every machine; 16 lanes and 2 cores as on the CI machine.
  space::SpaceParams params{.vector_lanes = 16, .cores = 2};
  space::SketchSpace sp(*dag, params);
  return ShapeSpace{shape, *dag, std::move(sp)};
}

std::string schedule_path(const std::string& op, std::uint64_t index) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("kiln-sketch-property-{}-{}.json", op, index))
      .string();
}

void check_sketch_configs(const std::string& op) {
  const std::uint64_t count = test::env_number("KILN_SKETCH_CONFIGS", 1000);
  const std::uint64_t seed = test::env_number("KILN_SKETCH_SEED", 1);
  ShapeSpace spaces[2] = {make_space(op, test::small_shapes().at(op)),
                          make_space(op, composite_shapes().at(op))};
  std::mt19937_64 rng(seed);
  // The last config of each shape, the parent of the next mutation.
  std::optional<space::SketchConfig> previous[2];
  test::KernelChecker& checker = test::KernelChecker::shared();
  int failures = 0;
  std::map<std::string, int> made;
  int tailed = 0;    // configs with a tile size that does not divide its extent
  int rfactored = 0; // configs with an rfactor step
  bool has_rfactor_sketch = false;
  for (const ShapeSpace& s : spaces)
    for (const space::Sketch& sk : s.space.sketches())
      has_rfactor_sketch = has_rfactor_sketch || sk.name().find("rfactored") != std::string::npos;
  for (std::uint64_t i = 0; i < count && failures < 5; ++i) {
    ShapeSpace& s = spaces[i % 2];
    std::optional<space::SketchConfig>& parent = previous[i % 2];
    // Of every four configs: two sampled, one a mutation of the last one,
    // one a crossover of the last one with a fresh sample of its sketch.
    space::SketchConfig config;
    std::string how;
    switch (parent ? i / 2 % 4 : 0) {
    case 2:
      config = s.space.mutate(*parent, rng), how = "mutation";
      break;
    case 3: {
      space::SketchConfig other = s.space.sample(rng);
      for (int tries = 0; tries < 16 && other.sketch != parent->sketch; ++tries)
        other = s.space.sample(rng);
      config = other.sketch == parent->sketch ? s.space.crossover(*parent, other, rng) : other;
      how = other.sketch == parent->sketch ? "crossover" : "sample";
      break;
    }
    default:
      config = s.space.sample(rng), how = "sample";
    }
    parent = config;
    ++made[how];
    const auto& axes = s.space.sketches()[config.sketch].axes();
    for (size_t t = 0; t < axes.size(); ++t)
      if (std::accumulate(config.tiles[t].begin(), config.tiles[t].end(), std::int64_t{1},
                          std::multiplies<>()) != axes[t].extent) {
        ++tailed;
        break;
      }
    std::vector<schedule::Step> steps = s.space.steps(config);
    rfactored += std::any_of(steps.begin(), steps.end(), [](const schedule::Step& step) {
      return std::holds_alternative<schedule::RfactorStep>(step);
    });
    auto state = schedule::State::replay(s.dag, steps);
    std::string where =
        fmt::format("op {} ({} {}), config {} of seed {}: sketch \"{}\"", op, how,
                    test::set_flags(s.shape), i, seed, s.space.sketches()[config.sketch].name());
    if (!state) {
      FAIL_CHECK(fmt::format("{}\nthe space made a config whose steps are refused: {}", where,
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
  fmt::print("{}: {} sketch configs checked ({} sampled, {} mutated, {} crossed over; {} with a "
             "tail, {} rfactored)\n",
             op, made["sample"] + made["mutation"] + made["crossover"], made["sample"],
             made["mutation"], made["crossover"], tailed, rfactored);
  // The small shapes' odd extents get tailed tilings (a masked vector of 16
  // lanes over 13 at least): the check above covers them, not by chance.
  if (count >= 100) {
    CHECK(tailed * 20 >= static_cast<int>(count));
    // Row reductions' rfactor sketches are checked too, not only drawn.
    if (has_rfactor_sketch)
      CHECK(rfactored * 10 >= static_cast<int>(count));
  }
}

} // namespace

TEST_CASE("every op in ops/ has a sketch property test", "[e2e][property][sketch]") {
  std::set<std::string> files, tested;
  for (const auto& path : test::op_files())
    files.insert(path.stem().string());
  for (const auto& [op, shape] : composite_shapes())
    tested.insert(op);
  INFO("add the op to composite_shapes() and a TEST_CASE in test/e2e/sketch_property_test.cpp");
  REQUIRE(files == tested);
}

// One test case per op, so that ctest runs them in parallel.
TEST_CASE("sketch configs of matmul", "[e2e][property][sketch]") {
  check_sketch_configs("matmul");
}
TEST_CASE("sketch configs of batch_matmul", "[e2e][property][sketch]") {
  check_sketch_configs("batch_matmul");
}
TEST_CASE("sketch configs of dense_bias_relu", "[e2e][property][sketch]") {
  check_sketch_configs("dense_bias_relu");
}
TEST_CASE("sketch configs of conv2d_nchw", "[e2e][property][sketch]") {
  check_sketch_configs("conv2d_nchw");
}
TEST_CASE("sketch configs of conv2d_nchwc", "[e2e][property][sketch]") {
  check_sketch_configs("conv2d_nchwc");
}
TEST_CASE("sketch configs of conv2d_nhwc", "[e2e][property][sketch]") {
  check_sketch_configs("conv2d_nhwc");
}
TEST_CASE("sketch configs of depthwise_conv2d", "[e2e][property][sketch]") {
  check_sketch_configs("depthwise_conv2d");
}
TEST_CASE("sketch configs of max_pool2d", "[e2e][property][sketch]") {
  check_sketch_configs("max_pool2d");
}
TEST_CASE("sketch configs of layer_norm", "[e2e][property][sketch]") {
  check_sketch_configs("layer_norm");
}

TEST_CASE("sketch configs of softmax", "[e2e][property][sketch]") {
  check_sketch_configs("softmax");
}
TEST_CASE("sketch configs of transpose", "[e2e][property][sketch]") {
  check_sketch_configs("transpose");
}
TEST_CASE("sketch configs of row_sum", "[e2e][property][sketch]") {
  check_sketch_configs("row_sum");
}
