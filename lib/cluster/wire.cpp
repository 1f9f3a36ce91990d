#include "wire.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kiln::cluster {

using json = nlohmann::json;

std::string encode(const BatchMessage& m) {
  json params = json::array();
  for (const ir::Param& p : m.task.params)
    params.push_back({p.name, p.value});
  json programs = json::array();
  for (const auto& steps : m.programs)
    programs.push_back(json::parse(schedule::steps_to_json(steps)));
  return json{{"batch", m.batch},
              {"task",
               {{"key", m.task.workload_key},
                {"op", m.task.op_name},
                {"params", params},
                {"dag", m.task.dag_text},
                {"source", m.task.source},
                {"flops", m.task.flops}}},
              {"programs", programs}}
      .dump();
}

std::string encode(const ResultMessage& m) {
  json results = json::array();
  for (const record::MeasureResult& r : m.results)
    results.push_back({{"error", std::string(record::error_name(r.error))},
                       {"message", r.message},
                       {"costs", r.costs},
                       {"number", r.number},
                       {"build_s", r.build_seconds},
                       {"run_s", r.run_seconds},
                       {"host", r.host},
                       {"rank", r.rank}});
  return json{{"batch", m.batch}, {"error", m.error}, {"results", results}}.dump();
}

static Error bad_message(const std::string& what) {
  return Error("bad-cluster-message",
               fmt::format("a rank of the job sent a message this kiln cannot read ({}); run the "
                           "same kiln build on every machine of the job",
                           what));
}

Expected<BatchMessage> decode_batch(std::string_view text) {
  try {
    const json j = json::parse(text);
    BatchMessage m;
    m.batch = j.at("batch").get<std::int64_t>();
    const json& t = j.at("task");
    m.task.workload_key = t.at("key").get<std::string>();
    m.task.op_name = t.at("op").get<std::string>();
    for (const json& p : t.at("params"))
      m.task.params.push_back({p.at(0).get<std::string>(), p.at(1).get<std::int64_t>()});
    m.task.dag_text = t.at("dag").get<std::string>();
    m.task.source = t.at("source").get<std::string>();
    m.task.flops = t.at("flops").get<double>();
    for (const json& p : j.at("programs")) {
      auto steps = schedule::steps_from_json(p.dump());
      if (!steps)
        return bad_message(steps.error().message());
      m.programs.push_back(std::move(*steps));
    }
    return m;
  } catch (const json::exception& e) {
    return bad_message(e.what());
  }
}

Expected<ResultMessage> decode_result(std::string_view text) {
  try {
    const json j = json::parse(text);
    ResultMessage m;
    m.batch = j.at("batch").get<std::int64_t>();
    m.error = j.at("error").get<std::string>();
    for (const json& r : j.at("results")) {
      record::MeasureResult result;
      auto error = record::parse_error_name(r.at("error").get<std::string>());
      if (!error)
        return bad_message("an unknown error kind");
      result.error = *error;
      result.message = r.at("message").get<std::string>();
      result.costs = r.at("costs").get<std::vector<double>>();
      result.number = r.at("number").get<int>();
      result.build_seconds = r.at("build_s").get<double>();
      result.run_seconds = r.at("run_s").get<double>();
      result.host = r.at("host").get<std::string>();
      result.rank = r.at("rank").get<int>();
      m.results.push_back(std::move(result));
    }
    return m;
  } catch (const json::exception& e) {
    return bad_message(e.what());
  }
}

} // namespace kiln::cluster
