// Private to export: a network export's whole-model program (the weights,
// NAME_create / NAME_run / NAME_destroy around the exported kernels) and
// what the header says of it.
#ifndef KILN_LIB_EXPORT_MODEL_EXPORT_H
#define KILN_LIB_EXPORT_MODEL_EXPORT_H

#include "kiln/codegen/model_program.h"
#include "kiln/export/export.h"
#include "kiln/graph/network.h"

#include <map>
#include <string>
#include <vector>

namespace kiln::export_ {

/// What the whole-model program needs of one exported kernel.
struct KernelEntry {
  std::string packed_kernel;  ///< `<symbol>_packed`
  std::string packed_prepack; ///< `<symbol>_prepack_packed`, or empty
  std::vector<std::int64_t> packed_bytes;
};

/// The program running `net` with the kernels of `by_key` (by workload
/// key; every task must be there), named `name`; fills `model` but its
/// object file.
codegen::ModelProgram model_program(const graph::Network& net, const std::string& name,
                                    const std::map<std::string, KernelEntry>& by_key,
                                    ExportedModel& model);

/// The header's block declaring the whole-model functions; `model_file`
/// is named in its comment.
std::string model_header_block(const graph::Network& net, const std::string& name,
                               const std::string& model_file, const ExportedModel& model);

} // namespace kiln::export_

#endif // KILN_LIB_EXPORT_MODEL_EXPORT_H
