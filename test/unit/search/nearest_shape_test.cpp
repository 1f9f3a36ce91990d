// The nearest-shape start: another shape's configs refitted to this one,
// checked against the interpreter, picked by measurement, and measured first
// by a tuning session.
#include "../ir/test_dags.h"
#include "random_records.h"

#include "kiln/codegen/target.h"
#include "kiln/measure/nearest_pick.h"
#include "kiln/record/nearest_shape.h"
#include "kiln/record/tuning_log.h"
#include "kiln/schedule/refit.h"
#include "kiln/search/search_space.h"
#include "kiln/search/session.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <numeric>

using namespace kiln;

namespace {

std::int64_t product(const std::vector<std::int64_t>& f) {
  return std::accumulate(f.begin(), f.end(), std::int64_t{1}, std::multiplies<std::int64_t>());
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_nearest_test_" + name)).string();
}

} // namespace

TEST_CASE("tile sizes refit to a new extent: kept where they fit, shrunk, padding cut",
          "[search][nearest]") {
  using V = std::vector<std::int64_t>;
  CHECK(schedule::refit_factors(V{4, 8}, 1000) == V{4, 8}); // pads 24 of 1000
  CHECK(schedule::refit_factors(V{16}, 5) == V{5});
  const V shrunk = schedule::refit_factors(V{64, 8}, 100);
  CHECK(shrunk.back() == 8); // the innermost (vector lanes) kept
  CHECK(product(shrunk) <= 100);
  CHECK(shrunk == V{7, 8}); // 112 elements run for 100, the least of any outer factor
  const V big = schedule::refit_factors(V{8, 4, 8}, 200);
  CHECK(product(big) <= 200);
  CHECK(big.back() == 8);
  CHECK(schedule::refit_factors(V{2, 2}, 1) == V{1, 1});
  for (std::int64_t extent : {1, 2, 3, 7, 97, 101, 1000, 30522})
    for (const V& f : {V{8}, V{16, 8}, V{4, 32, 2}, V{1000}}) {
      const V r = schedule::refit_factors(f, extent);
      CHECK(r.size() == f.size());
      CHECK(product(r) <= extent);
      CHECK(std::all_of(r.begin(), r.end(), [](std::int64_t x) { return x >= 1; }));
    }
}

TEST_CASE("the nearest tuned shape of the same op gives refitted configs that replay",
          "[search][nearest]") {
  const ir::ComputeDAG want = test::matmul_dag(48, 80, 56);
  const ir::ComputeDAG near = test::matmul_dag(64, 64, 64);
  const ir::ComputeDAG far = test::matmul_dag(8, 8, 512);
  std::vector<record::Record> records = test::random_records(far, 6, 1);
  for (record::Record& r : test::random_records(near, 12, 2))
    records.push_back(std::move(r));

  CHECK(record::shape_distance(want, want) == 0.0);
  CHECK(*record::shape_distance(want, near) < *record::shape_distance(want, far));
  ir::DAGBuilder b("matmul"); // another op of the same name: no shape of it
  auto A = b.input("A", {4, 4});
  b.output(b.compute("D", {{"i", 4}, {"j", 4}},
                     [&](const std::vector<ir::Expr>& v) { return A(v[0], v[1]) * 2.0f; }));
  CHECK_FALSE(record::shape_distance(want, std::move(b).build()).has_value());

  const auto configs = record::nearest_shape_configs(records, want, codegen::host_target(), 4);
  REQUIRE(configs.size() == 4);
  CHECK(configs.front().from->task.workload_key == near.workload_key());
  CHECK(configs.front().from->trial == 0); // the fastest first
  for (const record::NearestConfig& c : configs) {
    CHECK(schedule::State::replay(want, c.config.steps).ok());
    CHECK(c.describe().find("of matmul M=64 N=64 K=64") != std::string::npos);
  }
  // Its own workload's records are not a neighbour's.
  CHECK(record::nearest_shape_configs(records, near, codegen::host_target(), 4)
            .front()
            .from->task.workload_key == far.workload_key());
  CHECK(record::nearest_shape_configs({}, want, codegen::host_target(), 4).empty());
}

TEST_CASE("a nearest-shape pick is checked against the interpreter and timed here",
          "[search][nearest]") {
  const ir::ComputeDAG want = test::matmul_dag(37, 29, 41); // primes: every tile has a tail
  std::vector<record::Record> records = test::random_records(test::matmul_dag(32, 32, 32), 8, 3);
  measure::MeasureOptions options;
  options.isolate = false;
  std::string why;
  auto pick = measure::pick_nearest_shape(records, want, codegen::host_target(), options, 3, &why);
  REQUIRE(pick.ok());
  REQUIRE(pick->has_value());
  const record::Record& r = (*pick)->record;
  CHECK(r.task.workload_key == want.workload_key());
  CHECK(r.result.ok());
  CHECK((*pick)->description.find("nearest shape: trial") != std::string::npos);

  auto none = measure::pick_nearest_shape({}, want, codegen::host_target(), options, 3, &why);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  CHECK(why.find("no record of another shape of matmul") != std::string::npos);
}

TEST_CASE("a session on a new shape measures the nearest shape's configs first",
          "[search][nearest][session]") {
  const std::string from = temp_path("from.jsonl"), log = temp_path("to.jsonl");
  std::filesystem::remove(from);
  std::filesystem::remove(log);
  {
    auto writer = record::LogWriter::open(from);
    REQUIRE(writer.ok());
    REQUIRE_FALSE((*writer)->append(test::random_records(test::matmul_dag(32, 32, 32), 8, 4)));
  }
  const ir::ComputeDAG want = test::matmul_dag(24, 40, 20);
  search::SessionOptions o;
  o.tune.trials = 8;
  o.tune.batch = 4;
  o.tune.seed = 1;
  o.tune.confirm_top = 0;
  o.measure.isolate = false;
  o.measure.runner.timing.repeat = 1;
  o.log = log;
  o.transfer_logs = {from};
  auto session = search::TuningSession::create(want, codegen::host_target(), o);
  REQUIRE(session.ok());
  REQUIRE((*session)->notes().size() == search::kNearestSeeds);
  CHECK((*session)->notes().front().find("measured first: nearest shape, trial 0 of matmul") == 0);
  auto result = (*session)->run();
  REQUIRE(result.ok());
  auto transfer = record::load_log(from);
  REQUIRE(transfer.ok());
  const auto seeds = record::nearest_shape_configs(transfer->records, want, codegen::host_target(),
                                                   search::kNearestSeeds);
  REQUIRE(result->tune.records.size() >= 1 + seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) // after the naive schedule, in order
    CHECK(result->tune.records[1 + i].config.steps == seeds[i].config.steps);

  // A log that holds this very workload seeds nothing: resume from it instead.
  search::SessionOptions again = o;
  again.log = temp_path("again.jsonl");
  again.transfer_logs = {log};
  auto second = search::TuningSession::create(want, codegen::host_target(), again);
  REQUIRE(second.ok());
  REQUIRE((*second)->notes().size() == 1);
  CHECK((*second)->notes().front().find("--resume") != std::string::npos);
  std::filesystem::remove(from);
  std::filesystem::remove(log);
  std::filesystem::remove(log + ".best.json");
  std::filesystem::remove(again.log);
}
