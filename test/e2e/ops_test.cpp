// Every operator in ops/, at small shapes: parsed, lowered naively,
// JIT-compiled, run, and compared element by element with the interpreter.
#include "small_shapes.h"

#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

using namespace kiln;

TEST_CASE("every op in ops/ compiles naively and matches the interpreter", "[e2e][ops]") {
  Target target = codegen::host_target();
  int seen = 0;
  for (const auto& path : test::op_files()) {
    std::string op = path.stem().string();
    ++seen;
    for (const auto* table : {&test::small_shapes(), &test::edge_shapes()}) {
      const char* which = table == &test::small_shapes() ? "small" : "edge";
      DYNAMIC_SECTION(op << " (" << which << " shapes)") {
        auto shapes = table->find(op);
        INFO("add " << which << " test shapes for " << op << " in test/e2e/small_shapes.h");
        REQUIRE(shapes != table->end());
        auto dag = ir::parse_op_file(path.string(), shapes->second);
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
  }
  REQUIRE(seen >= 9);
}
