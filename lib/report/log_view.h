// The log as the report's sections see it: records grouped by task, then by
// run label, with each run's round lines, bests and tuning time. Built once;
// the sections only read it. Records are referenced, never copied, so a
// 100,000-record log costs a few pointers each.
#ifndef KILN_REPORT_LOG_VIEW_H
#define KILN_REPORT_LOG_VIEW_H

#include "kiln/record/tuning_log.h"
#include "kiln/report/report.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::report {

/// One run (a `run` label) on one task.
struct RunView {
  std::string label; ///< the record's `run`, or "(unlabelled)"
  std::string mode;  ///< "online", "offline", "hybrid", or "other"
  std::string strategy;
  std::string colour;                             ///< the run's colour in every chart
  std::vector<const record::Record*> records;     ///< by trial, then log order
  std::vector<const record::RoundRecord*> rounds; ///< log order
  const record::Record* best = nullptr;           ///< highest GFLOPS, valid only
  const record::Record* naive = nullptr;          ///< the untransformed schedule, if measured
  std::int64_t errors = 0;
  double seconds = 0; ///< tuning time: round clocks when logged, else record timestamps
};

/// One task (workload key).
struct TaskView {
  std::string key, op, params; ///< params: "M=512 N=512 K=512"
  double flops = 0;
  std::vector<const record::Record*> records; ///< every tuning record, log order
  std::vector<RunView> runs;                  ///< first appearance order
  std::vector<Baseline> baselines;
  const record::Record* best = nullptr;
  const record::Record* naive = nullptr;
  std::int64_t errors = 0;

  /// "matmul M=512 N=512 K=512"
  std::string name() const {
    if (op.empty()) // a task known only from round lines
      return key;
    return params.empty() ? op : op + " " + params;
  }
};

struct LogView {
  std::vector<TaskView> tasks;
  std::size_t records = 0; ///< tuning records (baselines excluded)
  std::size_t valid = 0;   ///< with a time
  std::size_t errors = 0;
  std::size_t runs = 0;                 ///< distinct run labels
  double first_time = 0, last_time = 0; ///< record timestamps, 0 when none
};

LogView make_view(const record::LoadedLog& log, const ReportOptions& options);

/// True for the naive schedule (no steps, no knobs): the speedup reference.
bool is_naive(const record::Record& r);
/// Rank of a mode for ordering: online, offline, hybrid, then the rest.
int mode_order(const std::string& mode);

/// Most tasks drawn per section; a log of a whole network lists the rest in
/// tables only.
inline constexpr std::size_t kMaxTaskCharts = 8;

} // namespace kiln::report

#endif
