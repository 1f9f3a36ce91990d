#include "kiln/record/record_json.h"

#include "kiln/support/json_number.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace kiln::record {

/// The fastest a record may claim to be: 1 PFLOPS.
constexpr double kMaxFlopsPerSecond = 1e15;

using nlohmann::json;

std::string to_json_line(const Record& r) {
  json params = json::array();
  for (const ir::Param& p : r.task.params)
    params.push_back({p.name, p.value});
  json config = json::object();
  // A template config keeps the steps its knobs made too, so that replay,
  // reports and training read it like any other config.
  config["steps"] = json::parse(schedule::steps_to_json(r.config.steps));
  if (!r.config.point.empty())
    config["point"] = r.config.point;
  if (!r.config.template_name.empty()) {
    config["template"] = r.config.template_name;
    json knobs = json::array();
    for (const auto& [k, v] : r.config.knobs)
      knobs.push_back({k, v});
    config["knobs"] = knobs;
  }
  json j = {
      {"v", kRecordVersion},
      {"task",
       {{"key", r.task.workload_key},
        {"op", r.task.op_name},
        {"params", params},
        {"dag", r.task.dag_text},
        {"source", r.task.source},
        {"flops", r.task.flops}}},
      {"target",
       {{"triple", r.target.triple},
        {"cpu", r.target.cpu},
        {"features", r.target.features},
        {"vector_bits", r.target.vector_bits},
        {"cores", r.target.cores}}},
      {"config", config},
      {"result",
       {{"error", std::string(error_name(r.result.error))},
        {"message", r.result.message},
        {"costs", r.result.costs},
        {"number", r.result.number},
        {"build_s", r.result.build_seconds},
        {"run_s", r.result.run_seconds}}},
      {"trial", r.trial},
      {"time", r.timestamp},
      {"kiln", r.kiln_version},
  };
  if (!r.run.empty())
    j["run"] = r.run;
  if (!std::isnan(r.predicted))
    j["predicted"] = r.predicted;
  if (r.result.rank >= 0) {
    j["result"]["host"] = r.result.host;
    j["result"]["rank"] = r.result.rank;
  }
  return j.dump();
}

namespace {
/// Reads fields with errors that name the field.
class RecordReader {
public:
  explicit RecordReader(const json& j) : root_(j) {}

  Record read() {
    if (!root_.is_object())
      fail("the line is not a JSON object");
    std::int64_t v = number<std::int64_t>(root_, "v");
    if (v != kRecordVersion)
      fail(fmt::format("record version {} is not supported (this kiln reads {})", v,
                       kRecordVersion));
    Record r;
    const json& task = object(root_, "task");
    r.task.workload_key = string(task, "key");
    r.task.op_name = string(task, "op");
    for (const json& p : array(task, "params")) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_number_integer())
        fail("task.params must be [name, value] pairs");
      r.task.params.push_back({p[0].get<std::string>(), value<std::int64_t>(p[1], "task.params")});
    }
    r.task.dag_text = string(task, "dag");
    r.task.source = string(task, "source");
    r.task.flops = number<double>(task, "flops");
    const json& target = object(root_, "target");
    r.target.triple = string(target, "triple");
    r.target.cpu = string(target, "cpu");
    r.target.features = string(target, "features");
    r.target.vector_bits = static_cast<int>(number<std::int64_t>(target, "vector_bits"));
    r.target.cores = static_cast<int>(number<std::int64_t>(target, "cores"));
    const json& config = object(root_, "config");
    if (config.contains("template")) {
      r.config.template_name = string(config, "template");
      for (const json& k : array(config, "knobs")) {
        if (!k.is_array() || k.size() != 2 || !k[0].is_string() || !k[1].is_number_integer())
          fail("config.knobs must be [name, choice] pairs");
        r.config.knobs.emplace_back(k[0].get<std::string>(),
                                    value<std::int64_t>(k[1], "config.knobs"));
      }
    }
    // Template records may carry knobs alone (as kiln wrote them before
    // template configs kept their steps).
    if (!config.contains("template") || config.contains("steps")) {
      auto steps = schedule::steps_from_json(array(config, "steps").dump());
      if (!steps)
        fail("config.steps: " + steps.error().message());
      r.config.steps = std::move(*steps);
    }
    if (config.contains("point")) {
      for (const json& x : array(config, "point")) {
        if (!x.is_number_integer())
          fail("config.point must be integers");
        r.config.point.push_back(value<std::int64_t>(x, "config.point"));
      }
    }
    const json& result = object(root_, "result");
    auto error = parse_error_name(string(result, "error"));
    if (!error)
      fail("result.error is not a known error kind");
    r.result.error = *error;
    r.result.message = string(result, "message");
    for (const json& c : array(result, "costs")) {
      if (!c.is_number())
        fail("result.costs must be numbers");
      r.result.costs.push_back(value<double>(c, "result.costs"));
    }
    if (r.result.error == MeasureError::None)
      check_timings(r);
    r.result.number = static_cast<int>(number<std::int64_t>(result, "number"));
    r.result.build_seconds = number<double>(result, "build_s");
    r.result.run_seconds = number<double>(result, "run_s");
    if (result.contains("rank")) {
      const auto rank = number<std::int64_t>(result, "rank");
      if (rank < 0 || rank > (1 << 24))
        fail("result.rank must be a rank, 0 to 2^24");
      r.result.rank = static_cast<int>(rank);
      r.result.host = string(result, "host");
    }
    r.trial = number<std::int64_t>(root_, "trial");
    r.timestamp = number<double>(root_, "time");
    r.kiln_version = string(root_, "kiln");
    if (root_.contains("run"))
      r.run = string(root_, "run");
    if (root_.contains("predicted"))
      r.predicted = number<double>(root_, "predicted");
    return r;
  }

private:
  /// A measured record's timings are positive, finite and physically
  /// possible, or a damaged (or forged) record would become the best.
  static void check_timings(const Record& r) {
    if (r.result.costs.empty())
      fail("result.costs is empty in a record without an error");
    for (double c : r.result.costs) {
      if (!(std::isfinite(c) && c > 0))
        fail(fmt::format("result.costs holds {}; a time must be a positive number of seconds", c));
      // 1 PFLOPS: past any CPU (a 192-core socket peaks near 50 TFLOPS).
      if (r.task.flops / c > kMaxFlopsPerSecond)
        fail(fmt::format("result.costs holds {:g} s for {:g} flops: {:g} GFLOPS is past any CPU", c,
                         r.task.flops, r.task.flops / c / 1e9));
    }
  }

  [[noreturn]] static void fail(const std::string& why) {
    throw UserError(Error("bad-record", why));
  }
  static const json& field(const json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end())
      fail(fmt::format("missing field \"{}\"", name));
    return *it;
  }
  static const json& object(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_object())
      fail(fmt::format("\"{}\" must be an object", name));
    return v;
  }
  static const json& array(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_array())
      fail(fmt::format("\"{}\" must be a list", name));
    return v;
  }
  static std::string string(const json& j, const char* name) {
    const json& v = field(j, name);
    if (!v.is_string())
      fail(fmt::format("\"{}\" must be a string", name));
    return v.get<std::string>();
  }
  template <typename T> static T number(const json& j, const char* name) {
    return value<T>(field(j, name), name);
  }
  template <typename T> static T value(const json& v, const char* what) {
    try {
      return json_number<T>(v, what);
    } catch (const std::out_of_range& e) {
      fail(e.what());
    }
  }

  const json& root_;
};
} // namespace

std::string to_json_line(const RoundRecord& r) {
  json j = {{"v", kRecordVersion},
            {"type", "round"},
            {"run", r.run},
            {"key", r.workload_key},
            {"round", r.round},
            {"sampled", r.sampled},
            {"predicted", r.predicted},
            {"measured", r.measured},
            {"errors", r.errors},
            {"model_accuracy", r.model_accuracy},
            {"best_gflops", r.best_gflops},
            {"sample_s", r.sample_seconds},
            {"measure_s", r.measure_seconds},
            {"update_s", r.update_seconds},
            {"elapsed_s", r.elapsed_seconds},
            {"trials", r.trials}};
  return j.dump();
}

std::optional<RoundRecord> parse_round(std::string_view line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !json_string_equals(j, "type", "round"))
    return std::nullopt;
  try {
    RoundRecord r;
    r.run = j.at("run").get<std::string>();
    r.workload_key = j.at("key").get<std::string>();
    r.round = json_number<int>(j.at("round"), "round");
    r.sampled = json_number<std::int64_t>(j.at("sampled"), "sampled");
    r.predicted = json_number<std::int64_t>(j.at("predicted"), "predicted");
    r.measured = json_number<std::int64_t>(j.at("measured"), "measured");
    r.errors = json_number<std::int64_t>(j.at("errors"), "errors");
    r.model_accuracy = json_number<double>(j.at("model_accuracy"), "model_accuracy");
    r.best_gflops = json_number<double>(j.at("best_gflops"), "best_gflops");
    r.sample_seconds = json_number<double>(j.at("sample_s"), "sample_s");
    r.measure_seconds = json_number<double>(j.at("measure_s"), "measure_s");
    r.update_seconds = json_number<double>(j.at("update_s"), "update_s");
    r.elapsed_seconds = json_number<double>(j.at("elapsed_s"), "elapsed_s");
    r.trials = json_number<std::int64_t>(j.at("trials"), "trials");
    return r;
  } catch (const std::exception&) { // a json::exception, or a number out of range
    return std::nullopt;
  }
}

std::string to_json_line(const NetworkRecord& n) {
  json tasks = json::array();
  for (const NetworkRecord::Task& t : n.tasks)
    tasks.push_back({{"key", t.key}, {"name", t.name}, {"weight", t.weight}, {"flops", t.flops}});
  json j = {{"v", kRecordVersion}, {"type", "network"},        {"run", n.run},
            {"model", n.model},    {"scheduler", n.scheduler}, {"tasks", std::move(tasks)}};
  return j.dump();
}

std::optional<NetworkRecord> parse_network(std::string_view line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !json_string_equals(j, "type", "network"))
    return std::nullopt;
  try {
    NetworkRecord n;
    n.run = j.at("run").get<std::string>();
    n.model = j.at("model").get<std::string>();
    n.scheduler = j.at("scheduler").get<std::string>();
    for (const json& t : j.at("tasks")) {
      NetworkRecord::Task task;
      task.key = t.at("key").get<std::string>();
      task.name = t.at("name").get<std::string>();
      task.weight = json_number<double>(t.at("weight"), "weight");
      task.flops = json_number<double>(t.at("flops"), "flops");
      if (!(task.weight > 0))
        return std::nullopt;
      n.tasks.push_back(std::move(task));
    }
    return n;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Expected<Record> parse_record(std::string_view line) {
  json j = json::parse(line, nullptr, false);
  if (j.is_discarded())
    return Error("bad-record", "not valid JSON (a truncated or damaged line)");
  return catch_user_error([&] { return RecordReader(j).read(); });
}

} // namespace kiln::record
