// The tuning curve of a run: the best GFLOPS found after N trials and the
// seconds the run had taken by then, read back from its log (`kiln best
// --curve 50,100,200,500,1000`). It is how tuning speed is compared with
// other tuners, which report "X GFLOPS after N trials in T seconds".
#ifndef KILN_RECORD_TUNING_CURVE_H
#define KILN_RECORD_TUNING_CURVE_H

#include "kiln/record/tuning_log.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::record {

struct CurvePoint {
  std::int64_t trials = 0;  ///< the budget asked for
  std::int64_t reached = 0; ///< trials the run had made by then (less when it stopped earlier)
  double best_gflops = 0;   ///< best valid record among them
  double seconds = 0;       ///< tuning time when that many trials were done (-1: unknown)
};

struct TuningCurve {
  std::string run;          ///< the run label of its records
  std::string workload_key; ///< the task
  std::int64_t trials = 0;  ///< the run's trials in all (a config's first timing each)
  double seconds = -1;      ///< its tuning time (-1: unknown)
  /// Over the whole run; a config timed again (confirmation timings) by the
  /// median of its timings, as record::history_best judges it.
  double best_gflops = 0;
  std::int64_t repeats = 0; ///< timings of configs timed before in the run
  std::vector<CurvePoint> points;
};

/// One curve per (run, task) in log order. Seconds come from the run's
/// round lines (elapsed time at the end of the round that reached N trials),
/// else from record timestamps.
std::vector<TuningCurve> tuning_curves(const LoadedLog& log, const std::vector<std::int64_t>& at);

} // namespace kiln::record

#endif
