// Which record each exported task runs with: the best of the logs for the
// target (record::history_best: the same CPU, else the same family, else
// any), with the stricter rule a cross-compiled export needs.
#ifndef KILN_EXPORT_CHOOSE_RECORDS_H
#define KILN_EXPORT_CHOOSE_RECORDS_H

#include "kiln/export/export.h"

#include <string>
#include <vector>

namespace kiln::export_ {

struct ChooseOptions {
  Target target;
  /// The target was named (`--target`, `--mcpu`): a record must be of its
  /// CPU or of its family (TargetMatch Exact or SameFamily), since a
  /// schedule tuned on another kind of machine says nothing about this one;
  /// a task whose records are all of other machines is an error
  /// ("no-record-for-target"). Exporting for the host falls back to any
  /// record, as `kiln replay` does, and says so.
  bool strict_target = false;
  /// Lifts the strict rule: the user names records of any machine as
  /// wanted (`--allow-any-target`).
  bool allow_any_target = false;
};

/// The tasks of the records: one DAG per workload key, rebuilt from the
/// records' DAG text, in order of first appearance. A record whose text no
/// longer parses (a log of an incompatible kiln) is an Error.
Expected<std::vector<ir::ComputeDAG>> tasks_of_records(const std::vector<record::Record>& records);

/// The op files (`*.kop`) of a folder, in name order, each with its default
/// parameters. An Error when the folder cannot be read or holds none
/// ("no-op-files"), or when one does not parse.
Expected<std::vector<ir::ComputeDAG>> tasks_of_op_folder(const std::string& dir);

/// One item per task, with its best valid record for the target, or none
/// (the naive schedule, with a note saying why: no record, or a record
/// whose steps do not apply to the DAG).
Expected<std::vector<ExportItem>> choose_records(const std::vector<ir::ComputeDAG>& tasks,
                                                 const std::vector<record::Record>& records,
                                                 const ChooseOptions& options);

} // namespace kiln::export_

#endif // KILN_EXPORT_CHOOSE_RECORDS_H
