#include "kiln/support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace kiln {

std::string Error::render() const {
  if (!where_.valid())
    return fmt::format("error: {}", message_);
  std::string out =
      fmt::format("{}:{}:{}: error: {}", where_.file.empty() ? "<input>" : where_.file, where_.line,
                  where_.column, message_);
  if (where_.line_text.empty())
    return out;
  // Columns count characters (a UTF-8 sequence is one). A long line is
  // shown as a window of kWindow characters around the caret.
  constexpr int kWindow = 120;
  std::vector<std::size_t> starts; // byte offset of each character
  for (std::size_t i = 0; i < where_.line_text.size(); ++i)
    if ((static_cast<unsigned char>(where_.line_text[i]) & 0xC0) != 0x80)
      starts.push_back(i);
  const int chars = static_cast<int>(starts.size());
  const int caret = std::clamp(where_.column - 1, 0, chars);
  const int first = chars <= kWindow ? 0 : std::clamp(caret - kWindow / 2, 0, chars - kWindow);
  const int last = std::min(chars, first + kWindow);
  auto byte_at = [&](int c) { return c < chars ? starts[c] : where_.line_text.size(); };
  const std::string_view line(where_.line_text);
  out += "\n  ";
  out += first > 0 ? "..." : "";
  out += line.substr(byte_at(first), byte_at(last) - byte_at(first));
  out += last < chars ? "..." : "";
  out += "\n  ";
  out += first > 0 ? "   " : "";
  // One space per character before the caret, tabs kept so that it lines up.
  for (int c = first; c < caret; ++c)
    out += line[byte_at(c)] == '\t' ? '\t' : ' ';
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
