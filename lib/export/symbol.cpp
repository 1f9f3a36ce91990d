#include "kiln/export/export.h"
#include "kiln/schedule/lower.h"

namespace kiln::export_ {

std::string export_symbol(const ir::ComputeDAG& dag, int digits) {
  KILN_ASSERT(digits > 0 && digits <= 16, "a workload hash has 16 hex digits");
  const std::string key = dag.workload_key();
  const std::size_t dash = key.rfind('-');
  KILN_ASSERT(dash != std::string::npos && key.size() - dash - 1 == 16,
              "a workload key ends in '-' and 16 hex digits");
  // kernel_name is the JIT's name, kiln_<op> with the op name made a C
  // identifier; the hash makes two shapes of one op two symbols.
  return schedule::kernel_name(dag) + "_" + key.substr(dash + 1, static_cast<std::size_t>(digits));
}

} // namespace kiln::export_
