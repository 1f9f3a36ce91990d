// The tuning session: what `kiln tune` runs, as a library call, on a real
// (small) op with real measurement.
#include "../ir/test_dags.h"

#include "kiln/codegen/target.h"
#include "kiln/record/history.h"
#include "kiln/search/session.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

using namespace kiln;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_session_test_" + name)).string();
}

search::SessionOptions small_run(const std::string& log) {
  search::SessionOptions o;
  o.source = "test";
  o.log = log;
  o.tune.trials = 6;
  o.tune.batch = 3;
  o.tune.confirm_top = 1;
  o.tune.confirm_timings = 1;
  o.measure.isolate = false;
  o.measure.runner.timing.repeat = 1;
  o.measure.runner.timing.min_repeat_ms = 1;
  return o;
}

} // namespace

TEST_CASE("a session tunes, logs, writes the best schedule and resumes", "[search][session]") {
  const std::string log = temp_path("run.jsonl");
  std::filesystem::remove(log);
  std::filesystem::remove(log + ".best.json");
  ir::ComputeDAG dag = test::matmul_dag(16, 16, 16);
  Target target = codegen::host_target();
  auto session = search::TuningSession::create(dag, target, small_run(log));
  REQUIRE(session.ok());
  auto result = (*session)->run();
  REQUIRE(result.ok());
  CHECK(result->tune.trials == 6);
  REQUIRE(result->tune.best.has_value());
  CHECK(result->schedule_file == log + ".best.json");
  CHECK(std::filesystem::exists(result->schedule_file));
  auto logged = record::load_log(log);
  REQUIRE(logged.ok());
  const record::Record* best = record::history_best(logged->records, dag.workload_key(), target);
  REQUIRE(best);
  CHECK(best->config.program() == result->tune.best->config.program());

  // Resumed, it measures none of the logged programs again.
  search::SessionOptions more = small_run(log);
  more.resume = true;
  auto again = search::TuningSession::create(dag, target, more);
  REQUIRE(again.ok());
  auto second = (*again)->run();
  REQUIRE(second.ok());
  std::set<schedule::ProgramKey> first;
  for (const record::Record& r : result->tune.records)
    first.insert(*r.config.program());
  // Its trials (the records before the confirmation timings at the end).
  const auto trials = second->tune.records.size() - second->tune.confirmations;
  REQUIRE(trials > 0);
  for (std::size_t i = 0; i < trials; ++i)
    CHECK(first.count(*second->tune.records[i].config.program()) == 0);
  CHECK(second->tune.records.front().trial > result->tune.records.back().trial);
}

TEST_CASE("a best schedule file that cannot be written is an error", "[search][session]") {
  const std::string log = temp_path("unwritable.jsonl");
  std::filesystem::remove(log);
  std::filesystem::remove_all(log + ".best.json");
  std::filesystem::create_directories(log + ".best.json"); // a directory in its place
  auto session = search::TuningSession::create(test::matmul_dag(16, 16, 16), codegen::host_target(),
                                               small_run(log));
  REQUIRE(session.ok());
  auto result = (*session)->run();
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().id() == "cannot-write");
  CHECK_THAT(result.error().message(), Catch::Contains(log + ".best.json"));
  std::filesystem::remove_all(log + ".best.json");
}

TEST_CASE("options out of range are refused before anything runs", "[search][session][error]") {
  const std::string log = temp_path("bad_options.jsonl");
  std::filesystem::remove(log);
  auto refused = [&](auto change, const char* flag) {
    search::SessionOptions o = small_run(log);
    change(o);
    auto session =
        search::TuningSession::create(test::matmul_dag(16, 16, 16), codegen::host_target(), o);
    REQUIRE_FALSE(session.ok());
    CHECK(session.error().id() == "bad-option");
    CHECK_THAT(session.error().message(), Catch::StartsWith(flag));
  };
  refused([](search::SessionOptions& o) { o.tune.trials = 0; }, "--trials 0");
  refused([](search::SessionOptions& o) { o.tune.batch = 0; }, "--batch 0");
  refused([](search::SessionOptions& o) { o.tune.time_budget_seconds = -1; }, "--time-budget");
  refused([](search::SessionOptions& o) { o.tune.measure_fraction = 0; }, "--measure-fraction");
  refused([](search::SessionOptions& o) { o.tune.retrain_growth = -0.5; }, "--retrain-growth");
  refused([](search::SessionOptions& o) { o.measure.runner.timeout_seconds = 0; }, "--timeout 0");
  refused([](search::SessionOptions& o) { o.measure.runner.timeout_seconds = 1e12; },
          "--timeout 1e+12");
  refused([](search::SessionOptions& o) { o.measure.runner.timing.repeat = 0; }, "--repeat 0");
  // Grid walks a space in order: the sampled sketch space has none.
  refused([](search::SessionOptions& o) { o.tune.strategy = "grid"; }, "--strategy grid");
  CHECK_FALSE(std::filesystem::exists(log)); // refused before the log was opened
}
