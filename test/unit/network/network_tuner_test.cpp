// A network tuned end to end with real measurements: every task gets its
// warm-up round, the log holds the network line and every task's records,
// the network built from the log computes numpy's outputs, and a resumed
// run measures none of the logged programs again.
#include "network_check.h"

#include "kiln/network/network_tuner.h"
#include "kiln/record/tuning_log.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

using namespace kiln;

namespace {

network::NetworkTuneOptions small_run(const std::string& log, int trials) {
  network::NetworkTuneOptions o;
  o.session.log = log;
  o.session.tune.trials = trials;
  o.session.tune.batch = 4;
  o.session.tune.confirm_top = 1;
  o.session.tune.confirm_timings = 1;
  o.session.measure.isolate = false;
  o.session.measure.runner.timing.repeat = 1;
  o.session.measure.runner.timing.min_repeat_ms = 1;
  return o;
}

} // namespace

TEST_CASE("kiln tune MODEL tunes every task into one log that the network runs from",
          "[network][tuner]") {
  const std::string model = test::test_model("tiny_bert.onnx");
  const std::string log =
      (std::filesystem::temp_directory_path() / "kiln-network-tuner-test.jsonl").string();
  std::filesystem::remove(log);
  graph::Network net = test::load("tiny_bert");
  const Target target = codegen::host_target();
  const int trials = static_cast<int>(net.tasks.size()) * 5;

  std::vector<int> picked;
  auto result =
      network::tune_network(net, model, target, small_run(log, trials),
                            [&](const network::NetworkRound& r) { picked.push_back(r.task); });
  INFO((result.ok() ? "" : result.error().message()));
  REQUIRE(result.ok());
  // The warm-up: every task once, in order, before any second round.
  REQUIRE(picked.size() >= net.tasks.size());
  for (std::size_t t = 0; t < net.tasks.size(); ++t)
    CHECK(picked[t] == static_cast<int>(t));
  CHECK(result->trials >= trials);
  CHECK(result->estimate_ms > 0);
  double sum_ms = 0;
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    REQUIRE(result->tasks[t].best.has_value());
    sum_ms += net.tasks[t].weight() * result->tasks[t].best->result.median() * 1e3;
  }
  CHECK(result->estimate_ms == Approx(sum_ms));

  auto logged = record::load_log(log);
  REQUIRE(logged.ok());
  REQUIRE(logged->networks.size() == 1);
  const record::NetworkRecord& line = logged->networks.front();
  CHECK(line.model == model);
  CHECK(line.scheduler == "gradient");
  REQUIRE(line.tasks.size() == net.tasks.size());
  std::map<std::string, int> records_of;
  for (const record::Record& r : logged->records) {
    CHECK(r.run == line.run);
    ++records_of[r.task.workload_key];
  }
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    CHECK(line.tasks[t].key == net.tasks[t].key);
    CHECK(line.tasks[t].weight == net.tasks[t].weight());
    CHECK(records_of[net.tasks[t].key] > 0);
  }

  // The network from the log's best records computes numpy's outputs.
  std::vector<network::TaskSchedule> schedules =
      network::schedules_from_records(net, logged->records, target);
  CHECK(test::worst_error(net, schedules, "tiny_bert") < 1e-4);

  // Resumed: more trials, and no program of a task measured twice (no
  // confirmation timings at the end, which time the best configs again).
  network::NetworkTuneOptions more = small_run(log, trials);
  more.session.resume = true;
  more.session.tune.confirm_top = 0;
  more.scheduler.kind = network::SchedulerKind::RoundRobin;
  auto resumed = network::tune_network(net, model, target, more);
  INFO((resumed.ok() ? "" : resumed.error().message()));
  REQUIRE(resumed.ok());
  auto after = record::load_log(log);
  REQUIRE(after.ok());
  CHECK(after->networks.size() == 2);
  CHECK(after->records.size() > logged->records.size());
  std::set<std::pair<std::string, schedule::ProgramKey>> first_run;
  for (const record::Record& r : logged->records)
    first_run.insert({r.task.workload_key, *r.config.program()});
  for (std::size_t i = logged->records.size(); i < after->records.size(); ++i) {
    const record::Record& r = after->records[i];
    CHECK(first_run.count({r.task.workload_key, *r.config.program()}) == 0);
  }
  std::filesystem::remove(log);
}
