// Tuned kernels out of kiln: each task compiled with its chosen schedule
// for a target, written as object code with a unique symbol, a C header
// declaring every kernel, and a static archive that bundles the kernels with
// the runtime they call (docs/library.md, "Export").
#ifndef KILN_EXPORT_EXPORT_H
#define KILN_EXPORT_EXPORT_H

#include "kiln/graph/network.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/record/history.h"
#include "kiln/record/record.h"
#include "kiln/support/error.h"
#include "kiln/support/target.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::export_ {

/// One task to export: its DAG and the record whose schedule it runs with.
struct ExportItem {
  ir::ComputeDAG dag;
  /// None: the naive schedule (`note` says why).
  std::optional<record::Record> record;
  /// How the record's target matches the export's (Exact without a record).
  record::TargetMatch match = record::TargetMatch::Exact;
  /// Why the kernel runs the naive schedule, or why the record is of another
  /// CPU; empty when there is nothing to say.
  std::string note;
};

struct ExportOptions {
  std::string out_dir; ///< created when missing
  /// The archive is libNAME.a, the header NAME.h; a C identifier.
  std::string name = "kiln_kernels";
  Target target; ///< host_target() or named_target()
  /// Also link libNAME.so with the system C compiler (`cc`); host targets only.
  bool shared = false;
  /// Files the export reads (logs, op files, models): none is overwritten.
  std::vector<std::string> inputs;
  /// A model's network (`kiln export --model`): the export also holds
  /// NAME_model.o, whose NAME_create, NAME_run and NAME_destroy run the
  /// whole model on the exported kernels (docs/library.md, "A whole
  /// model"). Every task of it must be among the items.
  const graph::Network* network = nullptr;
  std::string model_file; ///< the model's file, for the header's comment
};

struct ExportedKernel {
  std::string symbol; ///< the typed entry point, kiln_<op>_<8 hex digits>
  std::string op_name;
  std::string workload_key;
  std::string object_file; ///< <symbol>.o in the output folder
  bool has_prepack = false;
  /// Bytes of each packed buffer the caller allocates (docs/kernel-abi.md);
  /// empty unless has_prepack.
  std::vector<std::int64_t> packed_bytes;
  bool from_record = false; ///< else the naive schedule
  record::TargetMatch match = record::TargetMatch::Exact;
  std::int64_t trial = -1; ///< the record's, or -1
  double gflops = 0;       ///< as the record logged it, on record_cpu
  std::string record_cpu;
  std::string note; ///< ExportItem::note
};

/// The whole-model program of a network export.
struct ExportedModel {
  std::string object_file; ///< NAME_model.o in the output folder
  int calls = 0;           ///< kernel calls a run makes
  std::int64_t weights_bytes = 0;
  std::int64_t activation_bytes = 0; ///< the arena NAME_create allocates
  std::int64_t packed_bytes = 0;     ///< the packed weights, with it
};

struct ExportResult {
  std::vector<ExportedKernel> kernels;
  std::string header;  ///< NAME.h
  std::string archive; ///< libNAME.a
  /// libNAME.so, when ExportOptions::shared; else empty.
  std::string shared_library;
  /// kiln_runtime.c when the runtime could not be bundled (a target of
  /// another architecture or system): it must be compiled for the target
  /// and linked with the archive. Empty when the archive holds the runtime.
  std::string runtime_source;
  /// Libraries a program linking the archive also needs ("-lpthread -lm").
  std::string link_flags;
  std::vector<std::string> files; ///< every file written, in order
  /// Set when ExportOptions::network was.
  std::optional<ExportedModel> model;
};

/// Compiles every item for options.target and writes the export into
/// options.out_dir. Items with the same workload key are exported once.
/// Errors: a name that is no C identifier ("bad-export-name"), an output
/// that cannot be written or is an input ("cannot-write",
/// "output-is-input"), a schedule that does not lower or compile, a shared
/// library for another target or one `cc` cannot link ("shared-library").
Expected<ExportResult> export_kernels(const std::vector<ExportItem>& items,
                                      const ExportOptions& options);

/// The exported entry point of a task: `kiln_<op name>_<h>`, h the first 8
/// hex digits of the workload key's hash (`matmul-8abae7e68beeeca9` →
/// `kiln_matmul_8abae7e6`); the op name with characters that are not
/// letters, digits or '_' replaced by '_'. `digits` 16 gives the whole hash,
/// which export uses when two tasks' 8 digits collide.
std::string export_symbol(const ir::ComputeDAG& dag, int digits = 8);

} // namespace kiln::export_

#endif // KILN_EXPORT_EXPORT_H
