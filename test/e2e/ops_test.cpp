// Every operator in ops/, at small shapes: parsed, lowered naively,
// JIT-compiled, run, and compared element by element with the interpreter.
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

using namespace kiln;

/// Small shapes for each op file; a new op in ops/ must add its own here.
static const std::map<std::string, ir::ParamOverrides>& small_shapes() {
  static const std::map<std::string, ir::ParamOverrides> shapes = {
      {"matmul", {{"M", "13"}, {"N", "17"}, {"K", "9"}}},
      {"batch_matmul", {{"BATCH", "2"}, {"M", "5"}, {"N", "7"}, {"K", "3"}}},
      {"dense_bias_relu", {{"BATCH", "3"}, {"IN", "11"}, {"OUT", "6"}}},
      {"conv2d_nchw",
       {{"N", "1"}, {"C", "3"}, {"H", "7"}, {"W", "6"}, {"K", "4"}, {"stride", "2"}}},
      {"depthwise_conv2d", {{"N", "1"}, {"C", "3"}, {"H", "6"}, {"W", "7"}}},
      {"max_pool2d", {{"N", "1"}, {"C", "2"}, {"H", "9"}, {"W", "8"}}},
      {"softmax", {{"N", "3"}, {"M", "10"}}},
      {"transpose", {{"M", "5"}, {"N", "9"}}},
      {"row_sum", {{"M", "6"}, {"N", "10"}}},
  };
  return shapes;
}

TEST_CASE("every op in ops/ compiles naively and matches the interpreter", "[e2e][ops]") {
  std::filesystem::path dir = std::filesystem::path(KILN_SOURCE_DIR) / "ops";
  codegen::Target target = codegen::Target::host();
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".kop")
      continue;
    std::string op = entry.path().stem().string();
    ++seen;
    DYNAMIC_SECTION(op) {
      auto shapes = small_shapes().find(op);
      INFO("add small test shapes for " << op << " in test/e2e/ops_test.cpp");
      REQUIRE(shapes != small_shapes().end());
      auto dag = ir::parse_op_file(entry.path().string(), shapes->second);
      if (!dag)
        FAIL(dag.error().render());
      measure::RunOptions options;
      options.timing.repeat = 1;
      options.timing.min_repeat_ms = 0;
      auto report = measure::compile_and_run(*dag, schedule::lower_naive(*dag), target, options);
      if (!report)
        FAIL(report.error().render());
      INFO(report->check.describe());
      REQUIRE(report->check.passed);
      REQUIRE_FALSE(report->check.sampled());
    }
  }
  REQUIRE(seen >= 9);
}
