// Small HTML building blocks shared by the report's sections: escaping,
// number formatting, tables, and the page around the sections.
#ifndef KILN_REPORT_HTML_H
#define KILN_REPORT_HTML_H

#include <string>
#include <string_view>
#include <vector>

namespace kiln::report {

/// Text safe inside an element or a double-quoted attribute.
std::string escape(std::string_view text);

/// A number for people: thousands grouped ("12,345"), or a decimal with
/// `digits` significant digits ("0.0123", "153", "12.3").
std::string format_count(long long n);
std::string format_number(double v, int digits = 3);
/// Seconds as "850 ms", "12.4 s", "3 min 20 s", "2 h 05 min".
std::string format_seconds(double s);

/// An HTML table; cells are HTML (escape text first). Columns whose header
/// starts with '#' are right-aligned numbers (the '#' is dropped).
std::string table(const std::vector<std::string>& headers,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::string& css_class = "");

/// A paragraph in the muted "note" style.
std::string note(std::string_view html);

/// One section of the page: an anchor, a heading and its body.
struct Section {
  std::string id;    ///< anchor, also the <section>'s id
  std::string title; ///< heading and table-of-contents entry
  std::string body;  ///< HTML
};

/// The whole document: head with the inline stylesheet, a title, a summary
/// block, a table of contents and the sections in order.
std::string page(const std::string& title, const std::string& summary,
                 const std::vector<Section>& sections);

} // namespace kiln::report

#endif
