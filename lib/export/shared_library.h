// Private to export: libNAME.so, linked by the system's C compiler driver.
#ifndef KILN_LIB_EXPORT_SHARED_LIBRARY_H
#define KILN_LIB_EXPORT_SHARED_LIBRARY_H

#include "kiln/support/error.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::export_ {

/// Runs `cc -shared -o output objects... flags` ($CC instead of cc when
/// set). An Error ("shared-library") when it cannot start or fails; its
/// own messages go to stderr.
std::optional<Error> link_shared_library(const std::string& output,
                                         const std::vector<std::string>& objects,
                                         const std::string& flags);

} // namespace kiln::export_

#endif // KILN_LIB_EXPORT_SHARED_LIBRARY_H
