// The tuning report: one self-contained HTML page (inline SVG and CSS, no
// script, nothing fetched from the network) that shows how a tuning went,
// drawn from tuning logs alone. docs/report.md describes each section.
//
// Everything comes from the log lines: records (one measured config each,
// with `run`, `predicted`, `config.point`) and round lines (the online
// pipeline's counts and stage times). Large logs are sampled for the point
// charts, deterministically, and the page says so; statistics always use
// every record.
#ifndef KILN_REPORT_REPORT_H
#define KILN_REPORT_REPORT_H

#include "kiln/record/tuning_log.h"
#include "kiln/support/error.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kiln::report {

/// A library's speed on the task (OpenBLAS, oneDNN), drawn as a horizontal
/// line on the tuning curves.
struct Baseline {
  std::string label; ///< "OpenBLAS 0.3.21 sgemm"
  double gflops = 0;
  std::string workload_key; ///< the task it belongs to; empty: every task
};

struct ReportOptions {
  std::string title = "kiln tuning report";
  /// The command that produced the log(s), shown verbatim.
  std::string command;
  /// The log files read, shown in the header (informational).
  std::vector<std::string> sources;
  /// Library baselines. Records whose `run` starts with "baseline/" are
  /// baselines too (label: the rest of the run label).
  std::vector<Baseline> baselines;
  /// Most markers drawn in one point chart; past that the chart draws an
  /// evenly spaced subset (in log order) and says so.
  std::size_t max_points = 4000;
  /// Configs listed per task in "the best configs".
  int top = 10;
  /// Lower the best configs to loop nests (rebuilds each DAG from the
  /// record's text; configs that no longer replay show their steps only).
  bool loop_nests = true;
};

/// The whole page.
std::string render_report(const record::LoadedLog& log, const ReportOptions& options = {});

/// Writes render_report(log) to `output`. An Error when it cannot be written.
std::optional<Error> write_report(const record::LoadedLog& log, const std::string& output,
                                  const ReportOptions& options = {});

/// Reads the logs (damaged lines become warnings on the page) and writes the
/// report; `options.sources` defaults to `logs`.
std::optional<Error> write_report(const std::vector<std::string>& logs, const std::string& output,
                                  ReportOptions options = {});

} // namespace kiln::report

#endif
