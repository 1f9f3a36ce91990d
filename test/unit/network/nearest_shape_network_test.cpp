// A network whose log lacks some tasks: each such task runs the refitted
// best of the nearest tuned task of its op, checked, and the network still
// computes numpy's outputs; a network tuning run measures those configs
// first.
#include "../search/random_records.h"
#include "network_check.h"

#include "kiln/network/network_tuner.h"
#include "kiln/record/nearest_shape.h"
#include "kiln/record/tuning_log.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>

using namespace kiln;

namespace {

/// The first task that has another task of the same op in `net`.
std::pair<std::size_t, std::size_t> task_with_a_neighbour(const graph::Network& net) {
  for (std::size_t t = 0; t < net.tasks.size(); ++t)
    for (std::size_t u = 0; u < net.tasks.size(); ++u)
      if (u != t && record::shape_distance(net.tasks[t].dag, net.tasks[u].dag))
        return {t, u};
  FAIL("tiny_resnet has no two tasks of one op");
  return {0, 0};
}

} // namespace

TEST_CASE("a task with no record runs the nearest tuned task's refitted schedule",
          "[network][nearest]") {
  graph::Network net = test::load("tiny_resnet");
  const auto [lacking, neighbour] = task_with_a_neighbour(net);
  std::vector<record::Record> records;
  for (std::size_t t = 0; t < net.tasks.size(); ++t)
    if (t != lacking)
      for (record::Record& r : test::random_records(net.tasks[t].dag, 3, t + 1, 1, "tiny_resnet"))
        records.push_back(std::move(r));
  measure::MeasureOptions options;
  options.isolate = false;
  const Target target = codegen::host_target();
  std::vector<network::TaskSchedule> schedules =
      network::schedules_from_records(net, records, target, &options);
  INFO(schedules[lacking].source);
  REQUIRE(schedules[lacking].state.has_value());
  CHECK_THAT(schedules[lacking].source, Catch::StartsWith("nearest shape: trial"));
  CHECK(schedules[lacking].record_ms > 0);
  CHECK(test::worst_error(net, schedules, "tiny_resnet") < 1e-4);

  // Without the fallback it runs naive, saying so.
  std::vector<network::TaskSchedule> plain = network::schedules_from_records(net, records, target);
  CHECK_FALSE(plain[lacking].state.has_value());
  CHECK_THAT(plain[lacking].source, Catch::Contains("no record"));

  // Tuning the network with those records as --transfer: the task without
  // records of its own starts from the nearest task's configs.
  const std::string transfer =
      (std::filesystem::temp_directory_path() / "kiln-nearest-network-from.jsonl").string();
  const std::string log =
      (std::filesystem::temp_directory_path() / "kiln-nearest-network.jsonl").string();
  std::filesystem::remove(transfer);
  std::filesystem::remove(log);
  {
    std::vector<record::Record> neighbour_only;
    for (const record::Record& r : records)
      if (r.task.workload_key == net.tasks[neighbour].key)
        neighbour_only.push_back(r);
    auto writer = record::LogWriter::open(transfer);
    REQUIRE(writer.ok());
    REQUIRE_FALSE((*writer)->append(neighbour_only));
  }
  network::NetworkTuneOptions o;
  o.session.log = log;
  o.session.transfer_logs = {transfer};
  o.session.tune.trials = static_cast<int>(net.tasks.size()) * 4;
  o.session.tune.batch = 4;
  o.session.tune.confirm_top = 0;
  o.session.measure.isolate = false;
  o.session.measure.runner.timing.repeat = 1;
  auto result = network::tune_network(net, "tiny_resnet.onnx", target, o);
  INFO((result.ok() ? "" : result.error().message()));
  REQUIRE(result.ok());
  bool noted = false;
  for (const std::string& n : result->notes)
    noted |= n.find(fmt::format("task {} ({})", lacking, net.tasks[lacking].key)) == 0;
  CHECK(noted);
  CHECK(result->tasks[lacking].trials > 0);
  std::filesystem::remove(transfer);
  std::filesystem::remove(log);
}
