// Judging the records of a task: one timing per config (the median of its
// timings), the configs ranked, and the best config for a machine, falling
// back to records of a similar one. Every command that names "the best"
// (kiln best, replay, the tuner's result, the report) judges it here.
#ifndef KILN_RECORD_HISTORY_H
#define KILN_RECORD_HISTORY_H

#include "kiln/record/record.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::record {

/// How closely a record's target matches the machine asking.
enum class TargetMatch : std::uint8_t { Exact, SameFamily, Any };

/// Exact: the same triple and CPU (records that count as measured here);
/// SameFamily: the same architecture and vector width; else Any.
TargetMatch target_match(const Target& have, const Target& want);

/// "exact CPU", "same family", "another CPU": how every command and API
/// says which record it took.
const char* target_match_name(TargetMatch match);

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
/// within seconds (a shared VM's does, by a quarter): the
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

} // namespace kiln::record

#endif // KILN_RECORD_HISTORY_H
