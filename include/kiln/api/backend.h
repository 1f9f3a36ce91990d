// What a compiler backend calls: one object (a Backend) per process or per
// target holding the JIT, the logs it learnt from and the shipped data, and
// three verbs: look up the best record of an op in the logs (apply history
// best), compile an op with it into a callable kernel, and tune an op or a
// model's tasks. Everything here composes the modules below it
// (docs/library.md); the C API (kiln/kiln.h) is a thin layer over it.
#ifndef KILN_API_BACKEND_H
#define KILN_API_BACKEND_H

#include "kiln/codegen/jit.h"
#include "kiln/export/export.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/record/history.h"
#include "kiln/record/record.h"
#include "kiln/record/tuning_log.h"
#include "kiln/search/session.h"
#include "kiln/support/error.h"
#include "kiln/support/target.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::api {

/// The record apply_history_best chose for an op, or none.
struct BestRecord {
  std::optional<record::Record> record; ///< none: no valid record, the naive schedule
  record::TargetMatch match = record::TargetMatch::Any;
  /// The record is of another shape of the op, its tile sizes refitted and
  /// its answer checked here (Backend::best; record/nearest_shape.h).
  bool nearest_shape = false;
  /// Which record and why: "trial 412 of online/evolutionary/seed=1, 81.3
  /// GFLOPS on znver5 (exact CPU)", or "no record of matmul-…: the naive
  /// schedule".
  std::string description;
};

/// The best valid record of `dag`'s workload among `records` for `target`:
/// the same CPU, else the same family (architecture and vector width),
/// else any CPU, as `kiln best` and `kiln run` judge it (record/history.h).
BestRecord apply_history_best(const std::vector<record::Record>& records, const ir::ComputeDAG& dag,
                              const Target& target);

/// One compiled op in this process. Must not outlive its Backend.
class Kernel {
public:
  ~Kernel();
  const ir::ComputeDAG& dag() const { return dag_; }
  /// Where the schedule came from (BestRecord::description).
  const std::string& source() const { return source_; }
  /// Fills the buffers the kernel packs from its constant inputs; call it
  /// before the first run() and whenever a constant input changes. `args`:
  /// one pointer per DAG argument, inputs then outputs (docs/kernel-abi.md).
  void prepack(void** args);
  /// Computes the outputs. A kernel that packs needs prepack() first:
  /// an Error otherwise.
  std::optional<Error> run(void** args);

private:
  friend class Backend;
  Kernel(ir::ComputeDAG dag, std::unique_ptr<codegen::LoadedKernel> kernel, std::string source);
  ir::ComputeDAG dag_;
  std::unique_ptr<codegen::LoadedKernel> kernel_;
  std::string source_;
  bool prepacked_ = false;
};

class Backend {
public:
  /// A backend for the machine this process runs on.
  static Expected<std::unique_ptr<Backend>> create();
  /// A backend for `target` (codegen::named_target): it can look up
  /// records and export for it, but compiles in-process kernels only when
  /// the target is this machine's.
  static Expected<std::unique_ptr<Backend>> create(const Target& target);
  ~Backend();

  const Target& target() const { return target_; }

  /// Adds the records of tuning logs (bad lines are skipped and listed in
  /// warnings()); an Error when a file cannot be read.
  std::optional<Error> load_logs(const std::vector<std::string>& paths);
  const std::vector<record::Record>& records() const { return records_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  /// apply_history_best over the loaded records. When they hold none of
  /// `dag`'s workload and this backend is the host's: the nearest tuned
  /// shape of the op (measure::pick_nearest_shape: its best configs refitted,
  /// built, checked against the reference and timed here, the fastest right
  /// one taken; once per workload, then remembered), else the naive schedule.
  BestRecord best(const ir::ComputeDAG& dag) const;
  /// Whether best() may fall back on the nearest shape (default: yes).
  void set_nearest_shape(bool on) { nearest_shape_ = on; }

  /// Compiles `dag` with the loaded logs' best record (the naive schedule
  /// when there is none, or when its steps no longer apply; source() says
  /// which).
  Expected<std::unique_ptr<Kernel>> compile(const ir::ComputeDAG& dag);
  /// Compiles `dag` with the given record's schedule, or the naive one.
  Expected<std::unique_ptr<Kernel>> compile(const ir::ComputeDAG& dag,
                                            const std::optional<record::Record>& record,
                                            std::string source);

  /// Options for tune(): the defaults of `kiln tune`, with the shipped
  /// model found next to the library (kiln::data_dir) and `log` as the log.
  search::SessionOptions tune_options(const std::string& log) const;
  /// Tunes `dag` (search::TuningSession) and adds the run's records to the
  /// loaded ones, so that compile() uses them.
  Expected<search::SessionResult>
  tune(const ir::ComputeDAG& dag, const search::SessionOptions& options,
       const std::function<void(const search::RoundStats&)>& progress = nullptr);

  /// Exports `dags` for the backend's target (export_::export_kernels):
  /// each with the loaded logs' best record for it, or naive. For a backend
  /// of another machine a record must be of its CPU or family, unless
  /// `allow_any_target` (export_::choose_records). `options.target` is set
  /// to the backend's; the loaded logs' files count as inputs.
  Expected<export_::ExportResult> export_kernels(const std::vector<ir::ComputeDAG>& dags,
                                                 export_::ExportOptions options,
                                                 bool allow_any_target = false) const;
  /// Exports every task of a model as export_kernels does, and the
  /// functions that run the whole model (docs/library.md, "A whole model").
  Expected<export_::ExportResult> export_model(const graph::Network& net,
                                               export_::ExportOptions options,
                                               bool allow_any_target = false) const;

private:
  explicit Backend(const Target& target);
  Target target_;
  bool host_ = false;
  std::unique_ptr<codegen::Compiler> compiler_;
  std::unique_ptr<codegen::Jit> jit_;
  std::vector<record::Record> records_;
  std::vector<std::string> warnings_;
  std::vector<std::string> log_files_;
  bool nearest_shape_ = true;
  /// best()'s nearest-shape picks by workload key: measured once.
  mutable std::map<std::string, BestRecord> nearest_picks_;
};

} // namespace kiln::api

#endif // KILN_API_BACKEND_H
