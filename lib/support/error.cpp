#include "kiln/support/error.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace kiln {

std::string Error::render() const {
  if (!where_.valid())
    return fmt::format("error: {}", message_);
  std::string out =
      fmt::format("{}:{}:{}: error: {}", where_.file.empty() ? "<input>" : where_.file, where_.line,
                  where_.column, message_);
  if (where_.line_text.empty())
    return out;
  out += "\n  " + where_.line_text + "\n  ";
  // Keep tabs so that the caret lines up under the same column.
  for (int i = 1; i < where_.column && i <= static_cast<int>(where_.line_text.size()); ++i)
    out += where_.line_text[i - 1] == '\t' ? '\t' : ' ';
  out += '^';
  return out;
}

void report_internal_error(const char* file, int line, const std::string& why) {
  std::fprintf(stderr,
               "kiln internal error at %s:%d: %s\nThis is a bug in kiln; please report it.\n", file,
               line, why.c_str());
  std::abort();
}

} // namespace kiln
