// The tuning log: JSON Lines, one record a line, append-only, flushed after
// every batch. Reading never fails on a damaged line: it is skipped with a
// warning naming its line number, and the rest loads. Logs from several runs
// or machines merge by concatenation.
#ifndef KILN_RECORD_TUNING_LOG_H
#define KILN_RECORD_TUNING_LOG_H

#include "kiln/record/record.h"
#include "kiln/support/error.h"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::record {

struct LoadedLog {
  std::vector<Record> records;
  std::vector<RoundRecord> rounds;     ///< lines of type "round"
  std::vector<NetworkRecord> networks; ///< lines of type "network"
  std::vector<std::string> warnings;   ///< "log.jsonl:17: skipped: …"
  std::int64_t lines = 0;
};

/// Reads one log. An Error only when the file cannot be read at all.
Expected<LoadedLog> load_log(const std::string& path);
/// Reads several logs as one (their records concatenated in order).
Expected<LoadedLog> load_logs(const std::vector<std::string>& paths);

/// Appends records to a log file.
class LogWriter {
public:
  /// Opens (creating it if needed) for appending. If the file ends in a
  /// partial line (a killed run), a newline is written first so the next
  /// record starts on a line of its own.
  static Expected<std::unique_ptr<LogWriter>> open(const std::string& path);
  ~LogWriter();

  /// Writes the records, one line each, to the end of the file, under an
  /// advisory lock (flock): batches of runs that share a log never
  /// interleave.
  std::optional<Error> append(const std::vector<Record>& records);
  std::optional<Error> append(const RoundRecord& round);
  std::optional<Error> append(const NetworkRecord& network);
  const std::string& path() const { return path_; }

private:
  LogWriter(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::optional<Error> write(std::string_view text);
  std::string path_;
  int fd_;
};

} // namespace kiln::record

#endif
