// Training data for the cost model: measuring random sketch configs of many
// operators and shapes (`kiln dataset`), and turning logged records into
// model samples (`kiln train`, `kiln evaluate`, online retraining from a
// resumed log).
#ifndef KILN_SEARCH_DATASET_H
#define KILN_SEARCH_DATASET_H

#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/measurer.h"
#include "kiln/model/cost_model.h"
#include "kiln/model/metrics.h"
#include "kiln/record/tuning_log.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::search {

/// Model samples from records: each record's DAG is rebuilt from its logged
/// text, its steps replayed and lowered to features; its label is the
/// normalised throughput within its task (best time of the task / its
/// time; 0 for an error). Records of several machines (target CPUs) group
/// by task and machine: a sample's task is then "KEY@CPU". Records that
/// cannot be rebuilt are skipped with a warning. The samples come in an
/// order of their own (task, CPU, program, time), whatever the records'
/// order: what is trained and measured on them does not depend on it.
std::vector<model::Sample> samples_from_records(const std::vector<record::Record>& records,
                                                std::vector<std::string>* warnings = nullptr);

/// The shapes a dataset measures for an op: its defaults, and variants with
/// every size parameter (default >= 8) scaled by 3/4, 1/2, 3/8 and 1/4
/// (rounded down). Parameters below 8 (strides, paddings, kernel sizes)
/// keep their defaults.
std::vector<ir::ParamOverrides> dataset_shapes(const std::vector<ir::ParamDecl>& params);

/// How a dataset times its configs: 5 repeats of at least 25 ms (a tuning
/// run's 3 of 10 ms). Labels need more care than a tuning run's picks: most
/// dataset kernels run for microseconds on 2 threads, where a 10 ms repeat
/// is at the mercy of thread wake-ups and a VM's steal time, and noisy
/// labels cap the ranking accuracy any model can reach (docs/features.md).
measure::MeasureOptions dataset_measure_options();

struct DatasetOptions {
  int samples = 100; ///< random configs per task
  std::uint64_t seed = 1;
  measure::MeasureOptions measure = dataset_measure_options();
  double max_flops = 4e9; ///< skip shapes bigger than this (slow to measure)
};

struct DatasetProgress {
  std::string task; ///< op and shape
  int task_index = 0, tasks = 0;
  std::int64_t measured = 0, skipped = 0; ///< in this task: new, already in the log
};

/// Measures `samples` random sketch configs for every shape of every op
/// file, appending to `log`. Configs already in `existing` (a previous run
/// of the same command) are not measured again, so an interrupted dataset
/// resumes where it stopped.
std::optional<Error> collect_dataset(const std::vector<std::string>& op_files, const Target& target,
                                     const DatasetOptions& options,
                                     const std::vector<record::Record>& existing,
                                     record::LogWriter& log,
                                     const std::function<void(const DatasetProgress&)>& progress);

/// Records divided for a held-out evaluation.
struct Split {
  std::vector<record::Record> train, test;
};

/// Unseen shapes: for every op with several tasks, its task of the middle
/// size (by flops, then by the product of its parameters, so that ops
/// without flops are ordered too; the larger of two middles) goes to `test`,
/// the rest to `train`. Ops with a single task stay in `train`.
Split split_unseen_shapes(const std::vector<record::Record>& records);
/// An unseen machine: every record measured on `cpu` (Target::cpu) goes to
/// `test`, the rest to `train`.
Split split_unseen_cpu(const std::vector<record::Record>& records, const std::string& cpu);
/// The CPUs the records were measured on, sorted.
std::vector<std::string> record_cpus(const std::vector<record::Record>& records);
/// Unseen ops: every task of the named ops goes to `test`.
Split split_unseen_ops(const std::vector<record::Record>& records,
                       const std::vector<std::string>& ops);

} // namespace kiln::search

#endif
