// What the tool prints: tables, progress lines, summaries. Formatting lives
// here, not in the library, which returns data.
#ifndef KILN_TOOLS_KILN_OUTPUT_H
#define KILN_TOOLS_KILN_OUTPUT_H

#include "kiln/graph/network.h"
#include "kiln/measure/run.h"
#include "kiln/model/evaluation.h"
#include "kiln/network/network_tuner.h"
#include "kiln/record/record.h"
#include "kiln/record/tuning_curve.h"
#include "kiln/search/tuner.h"
#include "kiln/support/target.h"

#include <string>
#include <vector>

namespace kiln::tool {

/// `kiln run`: the check, the timing, the speed and the compile time.
std::string describe_run(const measure::RunReport& report);

/// One line: trials done / budget, best GFLOPS, trials per second, errors,
/// model accuracy, ETA. With `bar`, a bar that redraws in place.
std::string progress_line(const search::RoundStats& round, int budget, std::int64_t errors,
                          bool bar);

/// The end of a run: best GFLOPS, speedup over naive, time, where the best
/// schedule went and how to use it.
std::string summary(const search::TuneResult& result, const std::string& op_file,
                    const std::string& schedule_file, const std::string& log_file);

/// The best valid record per task and target: op, parameters, GFLOPS,
/// median time, trial index, target, workload key.
std::string best_table(const std::vector<const record::Record*>& best);

/// Tuning curves: one row per (run, task, N), then the end of each run.
std::string curve_table(const std::vector<record::TuningCurve>& curves);

/// A model evaluation: the pooled figures, then each task's.
std::string describe_evaluation(const model::Evaluation& evaluation);

/// The task table of a model: key, weight, FLOPs, the fused ops, the output
/// shape; then the totals.
std::string task_table(const graph::Network& net, const std::string& model);

/// The end of `kiln tune MODEL`: per task its weight, trials, best latency,
/// share of the network's time and speedup over naive; the estimate.
std::string network_tune_table(const graph::Network& net, const network::NetworkTuneResult& r);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_OUTPUT_H
