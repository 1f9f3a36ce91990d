// Private to export: the C header of an export, declaring every kernel with
// a comment on its arguments, packed buffers and threads.
#ifndef KILN_LIB_EXPORT_C_HEADER_H
#define KILN_LIB_EXPORT_C_HEADER_H

#include "kiln/export/export.h"
#include "kiln/schedule/loop_nest.h"

#include <string>
#include <vector>

namespace kiln::export_ {

/// What the header says of one kernel.
struct HeaderKernel {
  ExportedKernel info;
  const ir::ComputeDAG* dag = nullptr;
  std::vector<schedule::Buffer> args; ///< LoweredFunc::args: the DAG's, then the packed
  std::string run;                    ///< the record's run label; empty when naive
};

/// What the header says of the whole export.
struct HeaderInfo {
  std::string name; ///< NAME of NAME.h
  Target target;
  std::string link_flags; ///< "-lpthread -lm"
  /// Functions the kernels call besides the runtime: "expf, _ZGVeN16v_expf".
  std::vector<std::string> external_calls;
  bool runtime_in_archive = true; ///< else kiln_runtime.c is next to it
  /// A network export's whole-model declarations (model_export.h), or empty.
  std::string model_block;
};

/// The text of NAME.h.
std::string c_header(const HeaderInfo& info, const std::vector<HeaderKernel>& kernels);

/// `name` as a C identifier that is no keyword: other characters become '_',
/// a leading digit or a keyword gets a '_' added.
std::string c_identifier(const std::string& name);

/// `s` in upper case: the header's macros and include guard.
std::string upper(const std::string& s);

} // namespace kiln::export_

#endif // KILN_LIB_EXPORT_C_HEADER_H
