#include "kiln/measure/tuning_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>

namespace kiln::measure {

Expected<LoadedLog> load_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error("cannot-read-log",
                 fmt::format("cannot read the tuning log '{}': {}", path, std::strerror(errno)));
  LoadedLog log;
  std::string line;
  while (std::getline(in, line)) {
    ++log.lines;
    if (line.empty() || line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    if (line.find("\"type\":\"round\"") != std::string::npos) {
      if (auto round = parse_round(line)) {
        log.rounds.push_back(std::move(*round));
        continue;
      }
    }
    auto record = parse_record(line);
    if (!record) {
      log.warnings.push_back(
          fmt::format("{}:{}: skipped: {}", path, log.lines, record.error().message()));
      continue;
    }
    log.records.push_back(std::move(*record));
  }
  return log;
}

Expected<LoadedLog> load_logs(const std::vector<std::string>& paths) {
  LoadedLog all;
  for (const std::string& p : paths) {
    auto log = load_log(p);
    if (!log)
      return log.error();
    all.lines += log->lines;
    for (Record& r : log->records)
      all.records.push_back(std::move(r));
    for (RoundRecord& r : log->rounds)
      all.rounds.push_back(std::move(r));
    for (std::string& w : log->warnings)
      all.warnings.push_back(std::move(w));
  }
  return all;
}

Expected<std::unique_ptr<LogWriter>> LogWriter::open(const std::string& path) {
  // A log whose last line has no newline was cut off mid-write.
  bool needs_newline = false;
  if (std::FILE* existing = std::fopen(path.c_str(), "rb")) {
    if (std::fseek(existing, -1, SEEK_END) == 0) {
      int last = std::fgetc(existing);
      needs_newline = last != EOF && last != '\n';
    }
    std::fclose(existing);
  }
  std::FILE* f = std::fopen(path.c_str(), "ab");
  if (!f)
    return Error("cannot-write-log", fmt::format("cannot open the tuning log '{}' for writing: {}",
                                                 path, std::strerror(errno)));
  if (needs_newline)
    std::fputc('\n', f);
  return std::unique_ptr<LogWriter>(new LogWriter(path, f));
}

LogWriter::~LogWriter() {
  std::fclose(file_);
}

std::optional<Error> LogWriter::append(const RoundRecord& round) {
  return write(to_json_line(round) + "\n");
}

std::optional<Error> LogWriter::append(const std::vector<Record>& records) {
  std::string text;
  for (const Record& r : records)
    text += to_json_line(r) + "\n";
  return write(text);
}

std::optional<Error> LogWriter::write(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0)
    return Error("cannot-write-log", fmt::format("cannot write to the tuning log '{}': {}", path_,
                                                 std::strerror(errno)));
  return std::nullopt;
}

/// "x86_64" from "x86_64-pc-linux-gnu".
static std::string arch_of(const std::string& triple) {
  return triple.substr(0, triple.find('-'));
}

static TargetMatch match_of(const Target& have, const Target& want) {
  if (have.triple == want.triple && have.cpu == want.cpu)
    return TargetMatch::Exact;
  if (arch_of(have.triple) == arch_of(want.triple) && have.vector_bits == want.vector_bits)
    return TargetMatch::SameFamily;
  return TargetMatch::Any;
}

/// The valid records grouped by config, in order of the configs' first
/// records, each group sorted fastest first.
static std::vector<std::vector<const Record*>>
config_groups(const std::vector<const Record*>& records) {
  std::map<std::string, size_t> index;
  std::vector<std::vector<const Record*>> groups;
  for (const Record* r : records) {
    if (!r->result.ok())
      continue;
    auto [it, fresh] = index.try_emplace(r->config.key(), groups.size());
    if (fresh)
      groups.emplace_back();
    groups[it->second].push_back(r);
  }
  for (std::vector<const Record*>& g : groups)
    std::stable_sort(g.begin(), g.end(), [](const Record* a, const Record* b) {
      return a->result.median() < b->result.median();
    });
  return groups;
}

static const Record* median_of(const std::vector<const Record*>& group) {
  return group[(group.size() - 1) / 2];
}

std::vector<const Record*> config_medians(const std::vector<const Record*>& records) {
  std::vector<const Record*> out;
  for (const std::vector<const Record*>& g : config_groups(records))
    out.push_back(median_of(g));
  return out;
}

std::vector<const Record*> ranked_configs(const std::vector<const Record*>& records) {
  std::vector<std::pair<bool, const Record*>> judged; // (timed once, its median record)
  for (const std::vector<const Record*>& g : config_groups(records))
    judged.emplace_back(g.size() == 1, median_of(g));
  std::stable_sort(judged.begin(), judged.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first)
      return b.first; // timed more than once first
    return a.second->result.median() < b.second->result.median();
  });
  std::vector<const Record*> out;
  for (const auto& [once, r] : judged)
    out.push_back(r);
  return out;
}

/// The best config of some records of one task: the first of ranked_configs.
static const Record* fastest_config(const std::vector<const Record*>& records) {
  std::vector<const Record*> ranked = ranked_configs(records);
  return ranked.empty() ? nullptr : ranked.front();
}

const Record* history_best(const std::vector<Record>& records, const std::string& workload_key,
                           const Target& target, TargetMatch* matched) {
  std::vector<const Record*> by_match[3];
  for (const Record& r : records)
    if (r.task.workload_key == workload_key && r.result.ok())
      by_match[static_cast<int>(match_of(r.target, target))].push_back(&r);
  for (int m = 0; m < 3; ++m)
    if (const Record* best = fastest_config(by_match[m])) {
      if (matched)
        *matched = static_cast<TargetMatch>(m);
      return best;
    }
  return nullptr;
}

std::vector<const Record*> best_per_task(const std::vector<Record>& records) {
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::vector<const Record*>> tasks;
  for (const Record& r : records) {
    if (!r.result.ok())
      continue;
    auto key = std::make_pair(r.task.workload_key, r.target.triple + "/" + r.target.cpu);
    auto [it, fresh] = index.try_emplace(key, tasks.size());
    if (fresh)
      tasks.emplace_back();
    tasks[it->second].push_back(&r);
  }
  std::vector<const Record*> best;
  for (const std::vector<const Record*>& t : tasks)
    best.push_back(fastest_config(t));
  return best;
}

} // namespace kiln::measure
