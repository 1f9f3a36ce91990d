// Cost-model datasets: the shapes measured per op, the held-out splits, and
// a real (tiny) collection that resumes without measuring anything twice.
#include "kiln/search/dataset.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

using namespace kiln;
using namespace kiln::search;

namespace {

record::Record record_of(const std::string& op, std::int64_t size, const std::string& key) {
  record::Record r;
  r.task.op_name = op;
  r.task.workload_key = key;
  r.task.params = {{"N", size}};
  r.task.flops = 2.0 * static_cast<double>(size);
  return r;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

} // namespace

TEST_CASE("dataset shapes scale size parameters and keep small ones", "[search][dataset]") {
  std::vector<ir::ParamDecl> params{{"M", 512, false}, {"K", 3, false}, {"T", 1024, true}};
  std::vector<ir::ParamOverrides> shapes = dataset_shapes(params);
  REQUIRE(shapes.size() == 5);
  CHECK(shapes[0].empty()); // the op's defaults
  std::vector<std::string> m;
  for (size_t i = 1; i < shapes.size(); ++i) {
    REQUIRE(shapes[i].size() == 1); // K is below 8, T is derived
    CHECK(shapes[i][0].first == "M");
    m.push_back(shapes[i][0].second);
  }
  CHECK(m == std::vector<std::string>{"384", "256", "192", "128"});
}

TEST_CASE("unseen-shape split holds out the middle task of each op", "[search][dataset]") {
  std::vector<record::Record> records;
  for (std::int64_t n : {64, 128, 256, 512, 1024})
    for (int i = 0; i < 3; ++i)
      records.push_back(record_of("a", n, "a-" + std::to_string(n)));
  records.push_back(record_of("lonely", 8, "lonely-8"));
  Split s = split_unseen_shapes(records);
  std::set<std::string> test_keys, train_keys;
  for (const auto& r : s.test)
    test_keys.insert(r.task.workload_key);
  for (const auto& r : s.train)
    train_keys.insert(r.task.workload_key);
  CHECK(test_keys == std::set<std::string>{"a-256"});
  CHECK(s.test.size() == 3);
  CHECK(train_keys.count("lonely-8") == 1); // a single task is never held out
  CHECK(s.train.size() + s.test.size() == records.size());
}

TEST_CASE("a dataset times its labels longer than a tuning run", "[search][dataset]") {
  DatasetOptions options;
  measure::MeasureOptions tuning;
  CHECK(options.measure.runner.timing.repeat == 5);
  CHECK(options.measure.runner.timing.min_repeat_ms == 25);
  CHECK(options.measure.runner.timing.repeat > tuning.runner.timing.repeat);
  CHECK(options.measure.runner.timing.min_repeat_ms > tuning.runner.timing.min_repeat_ms);
}

TEST_CASE("collect_dataset measures every shape and resumes without re-measuring",
          "[search][dataset]") {
  std::string op = temp_path("kiln_dataset_test_row_sum.kop");
  std::string log_path = temp_path("kiln_dataset_test.jsonl");
  std::filesystem::remove(log_path);
  std::ofstream(op) << "op row_sum\nparam M = 16\nparam N = 32\ninput A : f32[M, N]\n"
                       "output S[i < M] = sum(A[i, j] for j < N)\n";
  DatasetOptions options;
  options.samples = 4;
  options.measure.isolate = false;
  options.measure.build_threads = 1;
  options.measure.runner.timing.repeat = 1;
  options.measure.runner.timing.min_repeat_ms = 0.1;
  int progress_calls = 0;
  auto progress = [&](const DatasetProgress& p) {
    ++progress_calls;
    CHECK(p.tasks == 5);
  };
  {
    auto writer = record::LogWriter::open(log_path);
    REQUIRE(writer);
    auto err = collect_dataset({op}, codegen::host_target(), options, {}, **writer, progress);
    REQUIRE_FALSE(err);
  }
  auto first = record::load_log(log_path);
  REQUIRE(first);
  std::map<std::string, int> per_task;
  for (const auto& r : first->records) {
    ++per_task[r.task.workload_key];
    CHECK(r.run == "dataset");
  }
  CHECK(per_task.size() == 5);
  for (const auto& [task, n] : per_task) {
    CHECK(n >= 1);
    CHECK(n <= options.samples);
  }
  CHECK(progress_calls >= 5);

  // The same command again: every config is already measured.
  {
    auto writer = record::LogWriter::open(log_path);
    REQUIRE(writer);
    std::int64_t skipped = 0, measured = 0;
    auto err = collect_dataset({op}, codegen::host_target(), options, first->records, **writer,
                               [&](const DatasetProgress& p) {
                                 skipped += p.skipped;
                                 measured += p.measured;
                               });
    REQUIRE_FALSE(err);
    CHECK(measured == 0);
    CHECK(skipped == static_cast<std::int64_t>(first->records.size()));
  }
  auto second = record::load_log(log_path);
  REQUIRE(second);
  CHECK(second->records.size() == first->records.size());

  // Records become model samples labelled within their task.
  std::vector<model::Sample> samples = samples_from_records(second->records);
  REQUIRE(samples.size() == second->records.size());
  std::map<std::string, double> best_label;
  for (const auto& s : samples) {
    CHECK(s.label >= 0);
    CHECK(s.label <= 1.0);
    best_label[s.task] = std::max(best_label[s.task], s.label);
  }
  for (const auto& [task, label] : best_label)
    CHECK(label == Approx(1.0));

  // The same task logged on a machine twice as slow: labelled within its
  // own machine's records, not as half as good as this machine's.
  std::vector<record::Record> two_machines = second->records;
  for (record::Record r : second->records) {
    r.target.cpu = "slowcpu";
    for (double& c : r.result.costs)
      c *= 2;
    two_machines.push_back(r);
  }
  std::vector<model::Sample> mixed = samples_from_records(two_machines);
  REQUIRE(mixed.size() == 2 * samples.size());
  // Each machine's labels of a task are this machine's alone.
  std::map<std::string, std::vector<double>> labels_here;
  for (const model::Sample& x : samples)
    labels_here[x.task].push_back(x.label);
  std::map<std::pair<std::string, std::string>, std::vector<double>> labels_mixed;
  for (const model::Sample& x : mixed) {
    const std::size_t at = x.task.find('@');
    REQUIRE(at != std::string::npos);
    labels_mixed[{x.task.substr(0, at), x.task.substr(at + 1)}].push_back(x.label);
  }
  CHECK(labels_mixed.size() == 2 * labels_here.size());
  for (auto& [task_cpu, labels] : labels_mixed) {
    INFO(task_cpu.first << " on " << task_cpu.second);
    CHECK((task_cpu.second == "slowcpu" || task_cpu.second == codegen::host_target().cpu));
    std::vector<double> want = labels_here[task_cpu.first];
    std::sort(labels.begin(), labels.end());
    std::sort(want.begin(), want.end());
    REQUIRE(labels.size() == want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      CHECK(labels[i] == Approx(want[i]));
  }

  // The records in any order give the same samples in the same order: what
  // is trained and measured on them cannot depend on the files' order.
  std::vector<record::Record> shuffled = two_machines;
  std::reverse(shuffled.begin(), shuffled.end());
  std::rotate(shuffled.begin(), shuffled.begin() + 3, shuffled.end());
  std::vector<model::Sample> again = samples_from_records(shuffled);
  REQUIRE(again.size() == mixed.size());
  for (std::size_t i = 0; i < mixed.size(); ++i) {
    CHECK(again[i].task == mixed[i].task);
    CHECK(again[i].label == mixed[i].label);
    CHECK(again[i].features.rows == mixed[i].features.rows);
  }

  // A held-out machine: its records are the test set, the rest train.
  Split by_cpu = split_unseen_cpu(two_machines, "slowcpu");
  CHECK(by_cpu.test.size() == second->records.size());
  CHECK(by_cpu.train.size() == second->records.size());
  for (const record::Record& r : by_cpu.test)
    CHECK(r.target.cpu == "slowcpu");
  CHECK(record_cpus(shuffled) ==
        std::vector<std::string>{std::min(codegen::host_target().cpu, std::string("slowcpu")),
                                 std::max(codegen::host_target().cpu, std::string("slowcpu"))});
  std::filesystem::remove(op);
  std::filesystem::remove(log_path);
}
