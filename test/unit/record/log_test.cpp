#include "../ir/test_dags.h"

#include "kiln/record/history.h"
#include "kiln/record/record.h"
#include "kiln/record/record_json.h"
#include "kiln/record/tuning_log.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

using namespace kiln;
using namespace kiln::record;

static Record make_record(const ir::ComputeDAG& dag, double seconds, std::int64_t trial,
                          const std::string& cpu = "znver4") {
  Record r;
  r.task = TaskInfo::from_dag(dag, "ops/matmul.kop");
  r.target.triple = "x86_64-pc-linux-gnu";
  r.target.cpu = cpu;
  r.target.features = "+avx2,+fma";
  r.target.vector_bits = 512;
  r.target.cores = 2;
  r.config.steps = {schedule::SplitStep{"C", "i", {4}},
                    schedule::AnnotateStep{"C", "j", schedule::Annotation::Vectorize}};
  r.result.costs = {seconds, seconds * 1.1, seconds * 0.9};
  r.result.number = 5;
  r.trial = trial;
  r.timestamp = 1764690000.5;
  r.kiln_version = "0.1.0";
  return r;
}

static std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("kiln_test_" + name)).string();
}

TEST_CASE("a record round-trips through its JSON line", "[record]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  Record r = make_record(dag, 0.002, 3);
  std::string line = to_json_line(r);
  REQUIRE(line.find('\n') == std::string::npos);
  auto back = parse_record(line);
  REQUIRE(back.ok());
  REQUIRE(back->task.workload_key == dag.workload_key());
  REQUIRE(back->task.dag_text == dag.to_string());
  REQUIRE(back->task.params == dag.params());
  REQUIRE(back->config.steps == r.config.steps);
  REQUIRE(back->result.costs == r.result.costs);
  REQUIRE(back->result.median() == Approx(0.002));
  REQUIRE(back->target.cpu == "znver4");
  REQUIRE(to_json_line(*back) == line);

  Record wrong = r;
  wrong.result = {};
  wrong.result.error = MeasureError::WrongAnswer;
  wrong.result.message = "C[0, 1]: got 1, want 2";
  auto w = parse_record(to_json_line(wrong));
  REQUIRE(w->result.error == MeasureError::WrongAnswer);
  REQUIRE_FALSE(w->result.ok());
  REQUIRE(w->gflops() == 0);

  Record knobs = r;
  knobs.config = {};
  knobs.config.template_name = "matmul_x86";
  knobs.config.knobs = {{"tile_i", 3}, {"vec", 1}};
  // Knobs alone name no program: only the template can rebuild it.
  REQUIRE_FALSE(parse_record(to_json_line(knobs))->config.program().has_value());
  // Template configs keep the steps their knobs made, and the point.
  knobs.config.steps = {schedule::CacheWriteStep{"C"}}; // no nested array: cut below
  knobs.config.point = {3, 1};
  auto with_steps = parse_record(to_json_line(knobs));
  REQUIRE(with_steps->config.steps == knobs.config.steps);
  REQUIRE(with_steps->config.knobs == knobs.config.knobs);
  REQUIRE(with_steps->config.point == knobs.config.point);
  // A version-1 template line with knobs alone still reads.
  std::string knobs_line = to_json_line(knobs);
  auto at = knobs_line.find("\"steps\":");
  auto end = knobs_line.find("],", at);
  REQUIRE(at != std::string::npos);
  knobs_line.erase(at, end + 2 - at);
  REQUIRE(knobs_line.find("steps") == std::string::npos);
  auto old = parse_record(knobs_line);
  REQUIRE(old.ok());
  REQUIRE(old->config.steps.empty());
  REQUIRE(old->config.knobs == knobs.config.knobs);
  REQUIRE_FALSE(old->config.program().has_value());

  REQUIRE(parse_record("{\"v\": 1").error().id() == "bad-record");
  REQUIRE_THAT(parse_record("{\"v\": 2}").error().message(),
               Catch::Contains("record version 2 is not supported"));
}

TEST_CASE("a damaged or truncated line is skipped with its line number", "[record][log]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  std::string path = temp_path("damaged.jsonl");
  std::filesystem::remove(path);
  {
    auto writer = LogWriter::open(path);
    REQUIRE(writer.ok());
    REQUIRE_FALSE((*writer)->append({make_record(dag, 0.003, 0), make_record(dag, 0.002, 1)}));
  }
  std::string third = to_json_line(make_record(dag, 0.001, 2));
  {
    std::ofstream out(path, std::ios::app);
    out << "{\"v\": 1, \"task\": 42}\n";      // line 3: wrong shape
    out << third.substr(0, third.size() / 2); // line 4: a killed run's last line
  }
  auto log = load_log(path);
  REQUIRE(log.ok());
  REQUIRE(log->records.size() == 2);
  REQUIRE(log->warnings.size() == 2);
  REQUIRE_THAT(log->warnings[0], Catch::Contains("damaged.jsonl:3: skipped"));
  REQUIRE_THAT(log->warnings[1], Catch::Contains("damaged.jsonl:4: skipped"));

  // Appending after the cut line starts a new line: nothing else is lost.
  {
    auto writer = LogWriter::open(path);
    REQUIRE_FALSE((*writer)->append({make_record(dag, 0.0005, 3)}));
  }
  auto again = load_log(path);
  REQUIRE(again->records.size() == 3);
  REQUIRE(again->records.back().trial == 3);
  REQUIRE(load_log(temp_path("does_not_exist.jsonl")).error().id() == "cannot-read-log");
  REQUIRE(LogWriter::open("/nonexistent-dir/x.jsonl").error().id() == "cannot-write-log");
  std::filesystem::remove(path);
}

TEST_CASE("a record with an impossible time is skipped, not the best", "[record][log]") {
  ir::ComputeDAG dag = test::matmul_dag(512, 512, 512);
  std::string path = temp_path("impossible.jsonl");
  {
    std::ofstream out(path);
    out << to_json_line(make_record(dag, 0.002, 0)) << "\n";
    out << to_json_line(make_record(dag, 0.0, 1)) << "\n";    // no time at all
    out << to_json_line(make_record(dag, 1e-9, 2)) << "\n";   // 2.7e8 GFLOPS
    out << to_json_line(make_record(dag, -0.001, 3)) << "\n"; // negative
  }
  auto log = load_log(path);
  REQUIRE(log.ok());
  REQUIRE(log->records.size() == 1);
  CHECK(log->records[0].trial == 0);
  REQUIRE(log->warnings.size() == 3);
  CHECK_THAT(log->warnings[1], Catch::Contains("past any CPU"));
  CHECK_THAT(log->warnings[2], Catch::Contains("positive number of seconds"));
  std::filesystem::remove(path);
}

TEST_CASE("records are appended to a log only, and a directory is no log", "[record][log]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  std::string op = temp_path("op.kop");
  {
    std::ofstream out(op);
    out << "# an op file given as --log by mistake\nop matmul\n";
  }
  auto refused = LogWriter::open(op);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().id() == "not-a-log");
  CHECK_THAT(refused.error().message(), Catch::Contains(op));
  std::ifstream in(op);
  std::string first;
  std::getline(in, first);
  CHECK(first == "# an op file given as --log by mistake"); // untouched

  // A log whose first line is damaged is still a log.
  std::string damaged = temp_path("first_line_damaged.jsonl");
  {
    std::ofstream out(damaged);
    out << "garbage\n" << to_json_line(make_record(dag, 0.001, 0)) << "\n";
  }
  CHECK(LogWriter::open(damaged).ok());
  std::filesystem::remove(op);
  std::filesystem::remove(damaged);

  auto dir = load_log(std::filesystem::temp_directory_path().string());
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().id() == "cannot-read-log");
  CHECK_THAT(dir.error().message(), Catch::Contains("is a directory"));
}

TEST_CASE("history best: exact target, then same family, then any", "[record][log]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  std::vector<Record> records = {make_record(dag, 0.004, 0, "znver4"),
                                 make_record(dag, 0.001, 1, "skylake-avx512")};
  Record failed = make_record(dag, 0.0001, 2, "znver4");
  failed.result.error = MeasureError::Timeout;
  records.push_back(failed);

  Target zen{"x86_64-pc-linux-gnu", "znver4", "", 512, 2};
  TargetMatch match;
  const Record* best = history_best(records, dag.workload_key(), zen, &match);
  REQUIRE(best);
  REQUIRE(best->trial == 0); // the error record never wins, the exact target comes first
  REQUIRE(match == TargetMatch::Exact);

  Target other{"x86_64-pc-linux-gnu", "sapphirerapids", "", 512, 2};
  best = history_best(records, dag.workload_key(), other, &match);
  REQUIRE(best->trial == 1);
  REQUIRE(match == TargetMatch::SameFamily);

  Target arm{"aarch64-linux-gnu", "neoverse-v1", "", 128, 2};
  best = history_best(records, dag.workload_key(), arm, &match);
  REQUIRE(best->trial == 1);
  REQUIRE(match == TargetMatch::Any);
  REQUIRE(history_best(records, "nope", zen) == nullptr);
  REQUIRE(best_per_task(records).size() == 2);
}

TEST_CASE("a config timed several times is judged by the median of its timings", "[record][log]") {
  // Config A: one lucky timing (1 ms) and two slow ones, median 3 ms;
  // config B: 2 ms, timed once. By median alone B is faster, and with every
  // config timed once the median alone decides.
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  auto timed = [&](double seconds, std::int64_t trial, std::int64_t factor) {
    Record r = make_record(dag, seconds, trial);
    r.config.steps = {schedule::SplitStep{"C", "i", {factor}}};
    return r;
  };
  Target zen{"x86_64-pc-linux-gnu", "znver4", "", 512, 2};
  auto pointers = [](const std::vector<Record>& records) {
    std::vector<const Record*> all;
    for (const Record& r : records)
      all.push_back(&r);
    return all;
  };
  std::vector<Record> records = {timed(0.003, 0, 4), timed(0.002, 1, 2)};
  CHECK(history_best(records, dag.workload_key(), zen)->trial == 1); // timed once each: B

  records = {timed(0.001, 0, 4), timed(0.002, 1, 2), timed(0.003, 2, 4), timed(0.0031, 3, 4)};
  std::vector<const Record*> medians = config_medians(pointers(records));
  REQUIRE(medians.size() == 2);
  CHECK(medians[0]->trial == 2); // A, represented by its median timing
  CHECK(medians[1]->trial == 1);

  // A was timed three times, in the same minutes (the tuner's confirmation);
  // B's one timing may have caught the machine in a faster moment. A ranks
  // first, for history_best, best_per_task and ranked_configs alike.
  std::vector<const Record*> ranked = ranked_configs(pointers(records));
  REQUIRE(ranked.size() == 2);
  CHECK(ranked[0]->trial == 2);
  CHECK(ranked[1]->trial == 1);
  const Record* best = history_best(records, dag.workload_key(), zen);
  REQUIRE(best);
  CHECK(best->trial == 2);
  REQUIRE(best_per_task(records).size() == 1);
  CHECK(best_per_task(records).front()->trial == 2);

  // Among configs timed more than once, the median decides: C, 2.5 and 2.6
  // ms (the faster middle of an even count), beats A's 3 ms.
  records.push_back(timed(0.0026, 4, 8));
  records.push_back(timed(0.0025, 5, 8));
  best = history_best(records, dag.workload_key(), zen);
  CHECK(best->trial == 5);
  // Timed well again, A wins: its median is now the faster middle timing.
  records.push_back(timed(0.0012, 6, 4));
  records.push_back(timed(0.0011, 7, 4));
  best = history_best(records, dag.workload_key(), zen);
  CHECK(best->trial == 6); // 1.0, 1.1, 1.2, 3.0, 3.1 ms: the median is 1.2
  CHECK(best_per_task(records).front()->trial == 6);
}

TEST_CASE("batches of two writers on one log never interleave", "[record][log]") {
  // Two kiln runs appending to one log, as two writers of one process (an
  // advisory lock is per open file, so they exclude each other as two
  // processes would). A batch is far larger than one buffered write.
  const std::string path = temp_path("shared.jsonl");
  std::filesystem::remove(path);
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  constexpr int kBatches = 40, kBatchSize = 64;
  auto append_batches = [&](const std::string& cpu) {
    auto writer = LogWriter::open(path);
    REQUIRE(writer.ok());
    std::vector<Record> batch;
    for (int i = 0; i < kBatchSize; ++i)
      batch.push_back(make_record(dag, 0.001 * (i + 1), i, cpu));
    for (int b = 0; b < kBatches; ++b)
      REQUIRE_FALSE((*writer)->append(batch));
  };
  std::thread a(append_batches, "cpu-a");
  std::thread b(append_batches, "cpu-b");
  a.join();
  b.join();
  auto log = load_log(path);
  REQUIRE(log.ok());
  CHECK(log->warnings.empty());
  REQUIRE(log->records.size() == std::size_t{2} * kBatches * kBatchSize);
  // Each batch's records are contiguous and in order.
  for (std::size_t i = 0; i < log->records.size(); i += kBatchSize)
    for (int k = 0; k < kBatchSize; ++k) {
      CHECK(log->records[i + k].target.cpu == log->records[i].target.cpu);
      CHECK(log->records[i + k].trial == k);
    }
  std::filesystem::remove(path);
}

TEST_CASE("a log that cannot be written is an error", "[record][log]") {
  auto writer = LogWriter::open("/dev/full");
  REQUIRE(writer.ok());
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  auto err = (*writer)->append({make_record(dag, 0.001, 0)});
  REQUIRE(err.has_value());
  CHECK(err->id() == "cannot-write-log");
  CHECK_THAT(err->message(), Catch::Contains("No space left on device"));
}

TEST_CASE("numbers a field cannot hold make a line bad, not a wrapped value", "[record][log]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  nlohmann::json good = nlohmann::json::parse(to_json_line(make_record(dag, 0.001, 3)));
  for (auto [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"trial", 1e300}, {"trial", 2.5}, {"trial", 18446744073709551615ULL}}) {
    nlohmann::json bad = good;
    bad[field] = value;
    auto r = parse_record(bad.dump());
    CAPTURE(bad[field].dump());
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().id() == "bad-record");
  }
  RoundRecord round;
  round.run = "r";
  round.workload_key = "k";
  nlohmann::json line = nlohmann::json::parse(to_json_line(round));
  REQUIRE(parse_round(line.dump()).has_value());
  line["round"] = 2.44444e111;
  CHECK_FALSE(parse_round(line.dump()).has_value());
  line["type"] = 7; // no round line, and no exception from reading its type
  CHECK_FALSE(parse_round(line.dump()).has_value());
}

TEST_CASE("a network line reads back from a log, and a damaged one is skipped", "[record][log]") {
  const std::string path = temp_path("network_line.jsonl");
  std::filesystem::remove(path);
  NetworkRecord n;
  n.run = "network/gradient/evolutionary/seed=1";
  n.model = "resnet18.onnx";
  n.scheduler = "gradient";
  n.tasks = {{"conv2d-0123456789abcdef", "conv2d_bias_relu", 2, 1.5e8}};
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  {
    auto writer = LogWriter::open(path);
    REQUIRE(writer.ok());
    REQUIRE_FALSE((*writer)->append(n).has_value());
    REQUIRE_FALSE((*writer)->append({make_record(dag, 0.001, 0)}).has_value());
  }
  {
    nlohmann::json bad = nlohmann::json::parse(to_json_line(n));
    bad["tasks"][0]["weight"] = -1;
    std::ofstream out(path, std::ios::app);
    out << bad.dump() << "\n";
  }
  auto log = load_log(path);
  REQUIRE(log.ok());
  REQUIRE(log->networks.size() == 1);
  CHECK(log->networks[0].model == "resnet18.onnx");
  REQUIRE(log->networks[0].tasks.size() == 1);
  CHECK(log->networks[0].tasks[0].weight == 2);
  CHECK(log->networks[0].tasks[0].name == "conv2d_bias_relu");
  CHECK(log->records.size() == 1);
  REQUIRE(log->warnings.size() == 1);
  CHECK_THAT(log->warnings[0], Catch::Contains(":3: skipped"));
  std::filesystem::remove(path);
}
