// The tuning log: JSON Lines, one record a line, append-only, flushed after
// every batch. Reading never fails on a damaged line: it is skipped with a
// warning naming its line number, and the rest loads. Logs from several runs
// or machines merge by concatenation.
#ifndef KILN_MEASURE_TUNING_LOG_H
#define KILN_MEASURE_TUNING_LOG_H

#include "kiln/codegen/target.h"
#include "kiln/measure/record.h"
#include "kiln/support/error.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace kiln::measure {

struct LoadedLog {
  std::vector<Record> records;
  std::vector<RoundRecord> rounds;   ///< lines of type "round"
  std::vector<std::string> warnings; ///< "log.jsonl:17: skipped: …"
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

  /// Writes the records, one line each, and flushes them to the file.
  std::optional<Error> append(const std::vector<Record>& records);
  std::optional<Error> append(const RoundRecord& round);
  const std::string& path() const { return path_; }

private:
  LogWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  std::optional<Error> write(const std::string& text);
  std::string path_;
  std::FILE* file_;
};

/// How closely a record's target matches the machine asking.
enum class TargetMatch : std::uint8_t { Exact, SameFamily, Any };

/// One record per config, of the valid ones given (of one task): for each
/// config, the record whose median time is the median of all its records'
/// medians (the faster middle one of an even count), in order of the
/// configs' first records. A config timed more than once (the tuner's
/// confirmation timings, a run resumed after it) is so judged by all its
/// timings, not by its luckiest one.
std::vector<const Record*> config_medians(const std::vector<const Record*>& records);

/// config_medians ranked to choose the best: the configs timed more than
/// once first, then those timed once, each group fastest first. Timings
/// from different moments do not compare on a machine whose speed drifts
/// by a quarter within seconds (docs/benchmarks.md, session 8): the
/// confirmed configs were timed in turn, in the same minutes, so they
/// compare with each other, and one early timing of another config, likely
/// in a faster moment, does not outrank them. A log without repeated
/// configs is ranked by median alone.
std::vector<const Record*> ranked_configs(const std::vector<const Record*>& records);

/// The best valid config of a task for a target, the first of
/// ranked_configs.
/// Fallback when the exact target (same triple and CPU) has none: the same
/// ISA family (same architecture and vector width), then any target. Returns
/// nullptr when the task has no valid record at all.
const Record* history_best(const std::vector<Record>& records, const std::string& workload_key,
                           const Target& target, TargetMatch* matched = nullptr);

/// The best valid config of every (task, target) in the records, the first
/// of ranked_configs, in order of first appearance.
std::vector<const Record*> best_per_task(const std::vector<Record>& records);

} // namespace kiln::measure

#endif
