#include "kiln/record/tuning_log.h"

#include "kiln/record/record_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sys/file.h>
#include <unistd.h>

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
    if (line.find("\"type\":\"network\"") != std::string::npos) {
      if (auto network = parse_network(line)) {
        log.networks.push_back(std::move(*network));
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
    for (NetworkRecord& n : log->networks)
      all.networks.push_back(std::move(n));
    for (std::string& w : log->warnings)
      all.warnings.push_back(std::move(w));
  }
  return all;
}

/// Whether a file may take records: it is empty, or one of its first lines
/// that hold anything is a JSON object (a log whose first lines are damaged
/// still is a log). An op file or a report given as --log is not. Only a
/// regular file is read, and only its first 64 KiB: a device such as
/// /dev/full reads as endless zeros.
static bool looks_like_log(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return true;
  std::ifstream in(path, std::ios::binary);
  std::string head(64 << 10, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  std::size_t start = 0;
  int lines = 0;
  while (lines < 8 && start < head.size()) {
    std::size_t end = std::min(head.find('\n', start), head.size());
    std::string_view line(head.data() + start, end - start);
    start = end + 1;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos)
      continue;
    ++lines;
    if (line[first] == '{')
      return true;
  }
  return lines == 0;
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
  std::error_code ec;
  if (std::FILE* existing =
          std::filesystem::is_regular_file(path, ec) ? std::fopen(path.c_str(), "rb") : nullptr) {
    if (std::fseek(existing, -1, SEEK_END) == 0) {
      int last = std::fgetc(existing);
      needs_newline = last != EOF && last != '\n';
    }
    std::fclose(existing);
  }
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return Error("cannot-write-log", fmt::format("cannot open the tuning log '{}' for writing: {}",
                                                 path, std::strerror(errno)));
  auto writer = std::unique_ptr<LogWriter>(new LogWriter(path, fd));
  if (needs_newline)
    if (auto err = writer->write("\n"))
      return *err;
  return writer;
}

LogWriter::~LogWriter() {
  ::close(fd_);
}

std::optional<Error> LogWriter::append(const RoundRecord& round) {
  return write(to_json_line(round) + "\n");
}

std::optional<Error> LogWriter::append(const NetworkRecord& network) {
  return write(to_json_line(network) + "\n");
}

std::optional<Error> LogWriter::append(const std::vector<Record>& records) {
  std::string text;
  for (const Record& r : records)
    text += to_json_line(r) + "\n";
  return write(text);
}

std::optional<Error> LogWriter::write(std::string_view text) {
  // Two runs may append to one log. O_APPEND puts every write() at the end,
  // and the advisory lock, held for the whole batch, keeps another kiln's
  // writes from falling between the writes of one batch (a write() of a
  // regular file may write less than it was given).
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR)
      return Error("cannot-write-log",
                   fmt::format("cannot lock the tuning log '{}': {}", path_, std::strerror(errno)));
  int error = 0;
  while (!text.empty()) {
    ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  ::flock(fd_, LOCK_UN);
  if (error != 0)
    return Error("cannot-write-log", fmt::format("cannot write to the tuning log '{}': {}", path_,
                                                 std::strerror(error)));
  return std::nullopt;
}

} // namespace kiln::record
