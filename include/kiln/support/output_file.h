// Checks made before a file is written, so that no output replaces one of
// the command's inputs and a path that cannot be written is found before the
// work that would fill it.
#ifndef KILN_SUPPORT_OUTPUT_FILE_H
#define KILN_SUPPORT_OUTPUT_FILE_H

#include "kiln/support/error.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// An Error when `output` is one of `inputs` (the same file, under any
/// name; id "output-is-input"), is a directory, or lies in a directory that
/// does not exist ("cannot-write"). `what` names the output in the message
/// ("the report").
std::optional<Error> check_output_file(const std::string& output,
                                       const std::vector<std::string>& inputs,
                                       const std::string& what);

/// Writes `bytes` to `output`, replacing it, after check_output_file; a
/// write that fails (a full disk, no permission) is an Error too
/// ("cannot-write", naming the file and the reason).
std::optional<Error> write_output_file(const std::string& output, std::string_view bytes,
                                       const std::vector<std::string>& inputs,
                                       const std::string& what);

} // namespace kiln

#endif // KILN_SUPPORT_OUTPUT_FILE_H
