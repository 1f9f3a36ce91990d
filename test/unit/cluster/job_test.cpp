// A tuning job over ranks, in one process: ranks are threads joined by an
// in-memory transport, measuring with the simulated measurer. The same job
// over MPI is test/mpi.
#include "../ir/test_dags.h"
#include "loopback_transport.h"

#include "kiln/cluster/job.h"
#include "kiln/codegen/target.h"
#include "kiln/measure/simulated_measurer.h"
#include "kiln/search/search_space.h"
#include "kiln/search/session.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <random>
#include <set>
#include <thread>

using namespace kiln;

namespace {

const measure::MeasurerFactory simulated = measure::simulated_measurers(0);

std::vector<schedule::State> random_states(const ir::ComputeDAG& dag, std::size_t n) {
  auto space = search::make_search_space(dag, codegen::host_target(), "sketch", "");
  REQUIRE(space.ok());
  std::mt19937_64 rng(5);
  std::vector<schedule::State> out;
  while (out.size() < n)
    if (auto s = (*space)->state((*space)->sample(rng)))
      out.push_back(std::move(*s));
  return out;
}

/// Ranks 1.. serving measurements on their own threads.
struct ServingRanks {
  ServingRanks(test::LoopbackHub& hub, int size, const measure::MeasureOptions& options) {
    for (int r = 1; r < size; ++r)
      threads.emplace_back([&hub, r, options] {
        auto endpoint = hub.endpoint(r, "node" + std::to_string(r));
        REQUIRE_FALSE(
            cluster::serve_measurements(*endpoint, codegen::host_target(), options, simulated));
      });
  }
  ~ServingRanks() {
    for (std::thread& t : threads)
      t.join();
  }
  std::vector<std::thread> threads;
};

} // namespace

TEST_CASE("a batch is split among the ranks, each result in place and marked with its rank",
          "[cluster]") {
  const ir::ComputeDAG dag = test::matmul_dag(32, 32, 32);
  test::LoopbackHub hub(3);
  measure::MeasureOptions options;
  auto rank0 = hub.endpoint(0, "node0");
  {
    ServingRanks ranks(hub, 3, options);
    cluster::Job job(*rank0);
    auto measurer = cluster::distributed_measurer(job, *simulated(dag, {}, options), dag, options);
    const std::vector<schedule::State> states = random_states(dag, 10);
    const std::vector<record::MeasureResult> results = measurer->measure(states);
    measure::SimulatedMeasurer alone(dag, 0);
    REQUIRE(results.size() == states.size());
    for (std::size_t i = 0; i < states.size(); ++i) {
      CHECK(results[i].ok());
      CHECK(results[i].costs.front() == alone.seconds_of(states[i]));
      const int rank = i < 3 ? 0 : i < 6 ? 1 : 2; // contiguous slices of 3, 3 and 4
      CHECK(results[i].rank == rank);
      CHECK(results[i].host == "node" + std::to_string(rank));
    }
    // A batch smaller than the job uses as many ranks as it has programs.
    const auto one = measurer->measure(std::vector<schedule::State>{states.front()});
    REQUIRE(one.size() == 1);
    CHECK(one.front().rank == 0);
    CHECK(measurer->stats().trials == 11);
    CHECK(job.events().empty());
    cluster::stop_job(job);
  }
}

TEST_CASE("a rank that does not answer is dropped and its programs measured on rank 0",
          "[cluster]") {
  const ir::ComputeDAG dag = test::matmul_dag(16, 16, 16);
  test::LoopbackHub hub(3);
  measure::MeasureOptions options;
  options.reference_timeout_seconds = 0.05;
  options.runner.timeout_seconds = 0.05;
  auto rank0 = hub.endpoint(0, "node0");
  // Rank 1 serves; rank 2 never reads its messages (a machine that hangs).
  std::thread rank1([&hub, options] {
    auto endpoint = hub.endpoint(1, "node1");
    REQUIRE_FALSE(
        cluster::serve_measurements(*endpoint, codegen::host_target(), options, simulated));
  });
  cluster::Job job(*rank0, 0.05);
  auto measurer = cluster::distributed_measurer(job, *simulated(dag, {}, options), dag, options);
  const std::vector<schedule::State> states = random_states(dag, 6);
  const auto results = measurer->measure(states);
  REQUIRE(results.size() == 6);
  for (const record::MeasureResult& r : results)
    CHECK(r.ok());
  CHECK(results[5].rank == 0); // rank 2's slice, redone here
  CHECK(results[2].rank == 1);
  CHECK(job.live_ranks() == std::vector<int>{0, 1});
  REQUIRE(job.events().size() == 1);
  CHECK_THAT(job.events().front(), Catch::StartsWith("rank 2 stopped answering (no answer in"));
  // The next batch goes to the ranks left.
  const auto next = measurer->measure(states);
  CHECK(next[5].rank == 1);
  cluster::stop_job(job);
  rank1.join();
}

TEST_CASE("a job of different machines is refused on every rank", "[cluster][error]") {
  test::LoopbackHub hub(2);
  Target other = codegen::host_target();
  other.cpu = "some-other-cpu";
  std::optional<Error> on_rank1;
  std::thread rank1([&] {
    auto endpoint = hub.endpoint(1, "node1");
    on_rank1 = cluster::check_same_machines(*endpoint, other);
  });
  auto rank0 = hub.endpoint(0, "node0");
  std::optional<Error> on_rank0 = cluster::check_same_machines(*rank0, codegen::host_target());
  rank1.join();
  REQUIRE(on_rank0);
  REQUIRE(on_rank1);
  CHECK(on_rank0->id() == "mixed-machines");
  CHECK(on_rank0->message() == on_rank1->message());
  CHECK_THAT(on_rank0->message(),
             Catch::Contains("rank 1 (node1) is not the same kind of machine"));
}

TEST_CASE("a session over three ranks logs the records of a session alone, rank and host added",
          "[cluster][session]") {
  const bool pipeline = GENERATE(false, true);
  INFO("pipelined: " << pipeline);
  const ir::ComputeDAG dag = test::matmul_dag(32, 32, 32);
  const auto dir = std::filesystem::temp_directory_path();
  const std::string alone_log = (dir / "kiln-cluster-alone.jsonl").string();
  const std::string job_log = (dir / "kiln-cluster-job.jsonl").string();
  std::filesystem::remove(alone_log);
  std::filesystem::remove(job_log);
  search::SessionOptions o;
  o.tune.trials = 40;
  o.tune.batch = 8;
  o.tune.confirm_top = 0;
  o.tune.pipeline = pipeline;
  o.make_measurer = simulated;
  auto run = [&](const std::string& log) {
    search::SessionOptions mine = o;
    mine.log = log;
    auto session = search::TuningSession::create(dag, codegen::host_target(), mine);
    REQUIRE(session.ok());
    auto result = (*session)->run();
    REQUIRE(result.ok());
    return result->tune.records;
  };
  const std::vector<record::Record> alone = run(alone_log);

  test::LoopbackHub hub(3);
  auto rank0 = hub.endpoint(0, "node0");
  std::vector<record::Record> spread;
  {
    ServingRanks ranks(hub, 3, o.measure);
    cluster::Job job(*rank0);
    search::SessionOptions distributed = o;
    distributed.make_measurer =
        [&job](const ir::ComputeDAG& d, const Target& t,
               const measure::MeasureOptions& m) -> Expected<std::unique_ptr<measure::Measurer>> {
      return cluster::distributed_measurer(job, *simulated(d, t, m), d, m);
    };
    o = distributed;
    spread = run(job_log);
    cluster::stop_job(job);
  }
  REQUIRE(spread.size() == alone.size());
  std::set<int> ranks;
  for (std::size_t i = 0; i < alone.size(); ++i) {
    CHECK(spread[i].config.steps == alone[i].config.steps);
    CHECK(spread[i].result.costs == alone[i].result.costs);
    CHECK(spread[i].trial == alone[i].trial);
    CHECK(alone[i].result.rank == -1);
    ranks.insert(spread[i].result.rank);
  }
  CHECK(ranks == std::set<int>{0, 1, 2});
  std::filesystem::remove(alone_log);
  std::filesystem::remove(job_log);
}

TEST_CASE("a rank that cannot read rank 0's message stops with an error naming the fix",
          "[cluster][error]") {
  test::LoopbackHub hub(2);
  auto rank0 = hub.endpoint(0, "node0");
  auto rank1 = hub.endpoint(1, "node1");
  rank0->send(1, cluster::Tag::Batch, "{not a batch");
  auto err = cluster::serve_measurements(*rank1, codegen::host_target(), {}, simulated);
  REQUIRE(err);
  CHECK(err->id() == "bad-cluster-message");
  CHECK_THAT(err->message(), Catch::Contains("run the same kiln build on every machine"));
}

TEST_CASE("a kiln whose MPI plugin is missing says how to get one", "[cluster][error]") {
  ::setenv("KILN_MPI_PLUGIN", "/nonexistent/libkiln_mpi.so", 1);
  auto joined = cluster::join_mpi_job();
  ::unsetenv("KILN_MPI_PLUGIN");
  REQUIRE_FALSE(joined.ok());
  CHECK(joined.error().id() == "no-mpi");
  CHECK_THAT(joined.error().message(), Catch::Contains("libopenmpi-dev"));
}
