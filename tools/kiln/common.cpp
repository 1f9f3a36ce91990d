#include "common.h"

#include "kiln/ir/parser.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/search/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace kiln::tool {

void add_op_options(CLI::App* cmd, OpOptions& op, const std::string& schedule_help) {
  cmd->add_option("opfile", op.file, "operator file (.kop)")->required();
  cmd->add_option("--set", op.sets, "override a parameter, NAME=VALUE (repeatable)");
  if (!schedule_help.empty())
    cmd->add_option("--schedule", op.schedule, schedule_help);
}

void add_timing_options(CLI::App* cmd, measure::TimingOptions& timing,
                        const std::string& repeat_help) {
  cmd->add_option("--repeat", timing.repeat, repeat_help)
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-repeat-ms", timing.min_repeat_ms,
                  "raise calls per repeat until a repeat lasts this long")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
}

int fail(const Error& e) {
  std::fprintf(stderr, "%s\n", e.render().c_str());
  return 1;
}

Expected<ir::ComputeDAG> load_op(const OpOptions& op) {
  ir::ParamOverrides overrides;
  for (const std::string& s : op.sets) {
    auto kv = ir::parse_override(s);
    if (!kv)
      return kv.error();
    overrides.push_back(*kv);
  }
  return ir::parse_op_file(op.file, overrides);
}

Expected<schedule::LoweredFunc> lower_op(const ir::ComputeDAG& dag, const OpOptions& op) {
  if (op.schedule.empty())
    return schedule::lower_naive(dag);
  auto state = schedule::State::load(dag, op.schedule);
  if (!state)
    return state.error();
  return schedule::lower(*state);
}

std::string params_text(const ir::ComputeDAG& dag) {
  std::string s;
  for (const ir::Param& p : dag.params())
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", p.name, p.value);
  return s;
}

std::string shell_quote(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_./=:@%+,-", c);
  });
  if (plain)
    return word;
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string op_command(const OpOptions& op) {
  std::string s = shell_quote(op.file);
  for (const std::string& kv : op.sets)
    s += " --set " + shell_quote(kv);
  return s;
}

Expected<record::LoadedLog> load_logs_verbose(const std::vector<std::string>& paths) {
  auto log = record::load_logs(paths);
  if (log)
    for (const std::string& w : log->warnings)
      std::fprintf(stderr, "warning: %s\n", w.c_str());
  return log;
}

Expected<std::vector<model::Sample>> samples_of(const std::vector<record::Record>& records) {
  std::vector<std::string> warnings;
  std::vector<model::Sample> samples = search::samples_from_records(records, &warnings);
  for (const std::string& w : warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (samples.empty())
    return Error("no-samples", "the records give no training sample; measure some first "
                               "(kiln dataset, kiln tune)");
  return samples;
}

} // namespace kiln::tool
