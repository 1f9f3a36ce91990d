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
  // Columns count characters (a UTF-8 sequence is one): one space per
  // character before the caret, and tabs kept so that it lines up.
  int column = 1;
  for (char c : where_.line_text) {
    if ((static_cast<unsigned char>(c) & 0xC0) == 0x80)
      continue; // a continuation byte of the character before
    if (column++ >= where_.column)
      break;
    out += c == '\t' ? '\t' : ' ';
  }
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
