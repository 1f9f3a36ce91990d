#include "kiln/support/output_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace kiln {

std::optional<Error> check_output_file(const std::string& output,
                                       const std::vector<std::string>& inputs,
                                       const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const std::string& input : inputs)
    if (!input.empty() && fs::equivalent(output, input, ec))
      return Error("output-is-input",
                   fmt::format("'{}' is an input of this command; writing {} there would "
                               "destroy it: give another path",
                               output, what));
  if (fs::is_directory(output, ec))
    return Error("cannot-write", fmt::format("cannot write {} to '{}': it is a directory; give a "
                                             "file path",
                                             what, output));
  fs::path dir = fs::path(output).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    return Error("cannot-write",
                 fmt::format("cannot write {} to '{}': the directory '{}' does not exist", what,
                             output, dir.string()));
  return std::nullopt;
}

std::optional<Error> write_output_file(const std::string& output, std::string_view bytes,
                                       const std::vector<std::string>& inputs,
                                       const std::string& what) {
  if (auto err = check_output_file(output, inputs, what))
    return err;
  std::ofstream out(output, std::ios::binary | std::ios::trunc);
  if (out)
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (out)
    out.close();
  if (!out)
    return Error("cannot-write",
                 fmt::format("cannot write {} to '{}': {}", what, output, std::strerror(errno)));
  return std::nullopt;
}

} // namespace kiln
