#include "kiln/record/tuning_log.h"

#include "kiln/record/record_json.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace kiln::record {

Expected<LoadedLog> load_log(const std::string& path) {
  // An ifstream opens a directory and reads nothing from it: that is not an
  // empty log.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error("cannot-read-log",
                 fmt::format("cannot read the tuning log '{}': it is a directory; give the log "
                             "file (a .jsonl)",
                             path));
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

/// Whether a file may take records: it is empty, or one of its first lines
/// that hold anything is a JSON object (a log whose first lines are damaged
/// still is a log). An op file or a report given as --log is not.
static bool looks_like_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string line;
  int lines = 0;
  bool empty = true;
  while (lines < 8 && std::getline(in, line)) {
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos)
      continue;
    empty = false;
    ++lines;
    if (line[first] == '{')
      return true;
  }
  return empty;
}

Expected<std::unique_ptr<LogWriter>> LogWriter::open(const std::string& path) {
  if (!looks_like_log(path))
    return Error("not-a-log",
                 fmt::format("'{}' is not a tuning log (none of its first lines is a JSON "
                             "record); appending records would damage it: give a new file or "
                             "an existing log",
                             path));
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

} // namespace kiln::record
