#include "../ir/test_dags.h"

#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/schedule/transform_step.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::schedule;

static std::vector<std::string> iter_names(const State& s, const std::string& stage) {
  std::vector<std::string> names;
  for (const Iterator& it : s.find_stage(stage)->iters)
    names.push_back(it.name);
  return names;
}

TEST_CASE("split names its parts and keeps tails", "[schedule][state]") {
  State s(test::matmul_dag(13, 8, 4));
  REQUIRE(s.split("C", "i", {2, 3}) == std::vector<std::string>{"i.0", "i.1", "i.2"});
  REQUIRE(iter_names(s, "C") == std::vector<std::string>{"i.0", "i.1", "i.2", "j", "k"});
  REQUIRE(s.find_stage("C")->find_iter("i.0")->extent == 3); // ceil(13 / 6)
  std::string text = to_string(lower(s));
  REQUIRE_THAT(text, Catch::Contains("if i.0 * 6 + i.1 * 3 + i.2 < 13:"));
}

TEST_CASE("fuse, reorder, annotate", "[schedule][state]") {
  State s(test::matmul_dag(8, 8, 8));
  s.split("C", "j", {4});
  s.reorder("C", {"i", "j.0", "k", "j.1"});
  std::string f = s.fuse("C", {"i", "j.0"});
  REQUIRE(f == "i@j.0");
  s.parallel("C", f);
  s.vectorize("C", "j.1");
  REQUIRE(iter_names(s, "C") == std::vector<std::string>{"i@j.0", "k", "j.1"});
  REQUIRE(s.find_stage("C")->find_iter("i@j.0")->annotation == Annotation::Parallel);
}

TEST_CASE("steps that cannot apply are refused with a reason", "[schedule][state]") {
  State s(test::matmul_dag(8, 8, 8));
  auto refused = [&](const Step& step, const char* id, const char* text) {
    auto err = s.apply(step);
    REQUIRE(err.has_value());
    CHECK(err->id() == id);
    CHECK_THAT(err->message(), Catch::Contains(text));
  };
  refused(SplitStep{"D", "i", {2}}, "unknown-stage", "no stage 'D'");
  refused(SplitStep{"C", "q", {2}}, "unknown-iterator", "has no loop 'q'");
  refused(SplitStep{"C", "i", {0}}, "invalid-step", "at least 1");
  // A damaged record's factors: they would wrap the product to 0 (SIGFPE).
  refused(SplitStep{"C", "i", {std::int64_t{1} << 32, std::int64_t{1} << 32}}, "invalid-step",
          "multiply past 2^63");
  refused(AnnotateStep{"C", "k", Annotation::Vectorize}, "invalid-step", "reduction loop");
  refused(AnnotateStep{"C", "k", Annotation::Parallel}, "invalid-step", "reduction loop");
  refused(FuseStep{"C", {"i", "k"}}, "invalid-step", "not adjacent");
  refused(FuseStep{"C", {"j", "k"}}, "invalid-step", "spatial loop with a reduction loop");
  refused(ReorderStep{"C", {"i", "j"}}, "invalid-step", "every loop once");
  refused(ComputeInlineStep{"C"}, "invalid-step", "output");
  refused(SplitStep{"A", "d0", {2}}, "invalid-step", "input");
  refused(ComputeAtStep{"C", "C", "i"}, "invalid-step", "output");
  REQUIRE(s.steps().empty()); // nothing refused was recorded
  s.cache_write("C");
  refused(ComputeAtStep{"C.local", "C", "nope"}, "unknown-iterator", "has no loop 'nope'");
  s.split("C", "i", {2});
  refused(CacheWriteStep{"C"}, "invalid-step", "before its loops are transformed");
}

TEST_CASE("cache_write and cache_read add stages", "[schedule][state]") {
  State s(test::matmul_dag(8, 8, 8));
  REQUIRE(s.cache_write("C") == "C.local");
  REQUIRE(s.dag().find_stage("C.local") == 2);
  REQUIRE(iter_names(s, "C") == std::vector<std::string>{"i", "j"});
  REQUIRE(iter_names(s, "C.local") == std::vector<std::string>{"i", "j", "k"});
  REQUIRE(s.cache_read("B", "C.local") == "B.cache");
  REQUIRE(s.dag().find_stage("B.cache") == 2);
  auto refused = s.apply(CacheReadStep{"A", "C"});
  REQUIRE(refused.has_value());
  REQUIRE_THAT(refused->message(), Catch::Contains("does not read"));
}

TEST_CASE("every step round-trips through JSON and replays to the same state", "[schedule][json]") {
  State s(test::matmul_dag(16, 16, 16));
  s.cache_write("C");
  s.cache_read("A", "C.local");
  s.split("C", "i", {4});
  s.split("C", "j", {8});
  s.reorder("C", {"i.0", "j.0", "i.1", "j.1"});
  s.fuse("C", {"i.0", "j.0"});
  s.compute_at("C.local", "C", "i.0@j.0");
  s.compute_at("A.cache", "C.local", "k");
  s.compute_root("A.cache");
  s.parallel("C", "i.0@j.0");
  s.vectorize("C", "j.1");
  s.unroll("C", "i.1");
  s.annotate("C", "i.1", Annotation::None);
  s.pragma_auto_unroll("C.local", 64);
  std::vector<Step> steps = s.steps();
  REQUIRE(steps.size() == 14);
  auto parsed = steps_from_json(steps_to_json(steps));
  REQUIRE(parsed.ok());
  REQUIRE(*parsed == steps);
  auto replayed = State::replay(test::matmul_dag(16, 16, 16), *parsed);
  REQUIRE(replayed.ok());
  REQUIRE(replayed->to_string() == s.to_string());
  REQUIRE(to_string(lower(*replayed)) == to_string(lower(s)));

  auto file = parse_schedule_file(schedule_file_text("matmul", steps), "s.json");
  REQUIRE(file.ok());
  REQUIRE(*file == steps);

  // Inline and its inverse round-trip too.
  ir::DAGBuilder b("chain");
  auto X = b.input("X", {4});
  auto T = b.compute("t", {{"i", 4}}, [&](const std::vector<ir::Expr>& v) { return X(v[0]) * 2; });
  auto Y = b.compute("y", {{"i", 4}}, [&](const std::vector<ir::Expr>& v) { return T(v[0]); });
  b.output(Y);
  State c(std::move(b).build());
  c.compute_inline("t");
  auto back = steps_from_json(steps_to_json(c.steps()));
  REQUIRE(back.ok());
  REQUIRE(*back == c.steps());
}

TEST_CASE("split factors whose product overflows are refused", "[schedule][state]") {
  State s(test::matmul_dag(1 << 22, 8, 8));
  auto err = s.apply(SplitStep{"C", "i", {1 << 22, 1 << 22, 1 << 22}});
  REQUIRE(err.has_value());
  CHECK(err->id() == "invalid-step");
  CHECK_THAT(err->message(), Catch::Contains("multiply past 2^63"));
  // A schedule file with such a step replays to an error, not a signal.
  auto steps = steps_from_json(
      R"([{"step": "split", "stage": "C", "iter": "i", "factors": [4294967296, 4294967296]}])");
  REQUIRE(steps.ok());
  auto replayed = State::replay(test::matmul_dag(8, 8, 8), *steps);
  REQUIRE_FALSE(replayed.ok());
  CHECK(replayed.error().id() == "invalid-step");
}

TEST_CASE("malformed schedules are clear errors", "[schedule][json]") {
  auto bad_json = steps_from_json("[{\"step\": \"split\"");
  REQUIRE(bad_json.error().id() == "bad-schedule");
  auto unknown = steps_from_json(R"([{"step": "tile", "stage": "C"}])");
  REQUIRE_THAT(unknown.error().message(), Catch::Contains("unknown step \"tile\""));
  auto typo = steps_from_json(R"([{"step": "split", "stage": "C", "iter": "i", "factor": [4]}])");
  REQUIRE_THAT(typo.error().message(), Catch::Contains("needs the field \"factors\""));
  auto extra = steps_from_json(
      R"([{"step": "split", "stage": "C", "iter": "i", "factors": [4], "axis": 1}])");
  REQUIRE_THAT(extra.error().message(), Catch::Contains("unknown field \"axis\""));
  auto version = parse_schedule_file(R"({"version": 2, "steps": []})", "s.json");
  REQUIRE_THAT(version.error().message(), Catch::Contains("unsupported schedule version 2"));
  auto missing = read_schedule_file("/nonexistent/s.json");
  REQUIRE(missing.error().id() == "cannot-read");
  auto replay = State::replay(test::matmul_dag(4, 4, 4), {SplitStep{"C", "x", {2}}});
  REQUIRE_THAT(replay.error().message(), Catch::StartsWith("step 0 (split)"));
}

TEST_CASE("a schedule file loads onto its op, one that does not fit names the file",
          "[schedule][json]") {
  const std::string dir = std::string(KILN_SOURCE_DIR) + "/test/cli/";
  auto fits = State::load(test::matmul_dag(16, 16, 16), dir + "matmul16_start.json");
  REQUIRE(fits.ok());
  CHECK(fits->steps() == read_schedule_file(dir + "matmul16_start.json").take());
  auto other_op = State::load(test::matmul_dag(16, 16, 16),
                              std::string(KILN_SOURCE_DIR) + "/bench/schedules/conv2d_nhwc.json");
  REQUIRE(!other_op.ok());
  CHECK_THAT(other_op.error().message(),
             Catch::StartsWith(std::string(KILN_SOURCE_DIR) +
                               "/bench/schedules/conv2d_nhwc.json: step 0 (cache_write)"));
  CHECK(State::load(test::matmul_dag(4, 4, 4), "/nonexistent/s.json").error().id() ==
        "cannot-read");
}

TEST_CASE("compute_at computes only the region one iteration reads", "[schedule][bounds]") {
  State s(test::matmul_dag(64, 64, 64));
  s.cache_write("C");
  s.split("C", "i", {4});
  s.split("C", "j", {16});
  s.reorder("C", {"i.0", "j.0", "i.1", "j.1"});
  s.compute_at("C.local", "C", "j.0");
  std::string text = to_string(lower(s));
  REQUIRE_THAT(text, Catch::Contains("allocate C.local: f32[4, 16] (local)"));
  REQUIRE_THAT(text, Catch::Contains("for C.local.i in 0..4:"));
  REQUIRE_THAT(text, Catch::Contains("C[i.0 * 4 + i.1, j.0 * 16 + j.1] = C.local[i.1, j.1]"));
}
