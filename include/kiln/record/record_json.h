// Records as lines of the tuning log: one JSON object a line, versioned
// (docs/log-format.md).
#ifndef KILN_RECORD_RECORD_JSON_H
#define KILN_RECORD_RECORD_JSON_H

#include "kiln/record/record.h"

#include <optional>
#include <string>
#include <string_view>

namespace kiln::record {

/// Format version of records; readers refuse other versions line by line.
inline constexpr int kRecordVersion = 1;

/// One JSON object on one line (no newline).
std::string to_json_line(const Record& record);
/// Parses one log line; the Error says what is wrong with it.
Expected<Record> parse_record(std::string_view line);

std::string to_json_line(const RoundRecord& round);
/// Parses a round line; nullopt when the line is not one.
std::optional<RoundRecord> parse_round(std::string_view line);
std::string to_json_line(const NetworkRecord& network);
/// Parses a network line; nullopt when the line is not one.
std::optional<NetworkRecord> parse_network(std::string_view line);

} // namespace kiln::record

#endif // KILN_RECORD_RECORD_JSON_H
