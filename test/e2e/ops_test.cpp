// Every operator in ops/, at small shapes: parsed, lowered naively,
// JIT-compiled, run, and compared element by element with the interpreter.
#include "small_shapes.h"

#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace kiln;
using test::small_shapes;

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
      INFO("add small test shapes for " << op << " in test/e2e/small_shapes.h");
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
