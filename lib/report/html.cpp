#include "html.h"

#include <fmt/format.h>

#include <cmath>

namespace kiln::report {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string format_count(long long n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string format_number(double v, int digits) {
  if (!std::isfinite(v))
    return "–";
  if (std::abs(v) >= std::pow(10, digits)) // no exponent for big numbers
    return format_count(std::llround(v));
  std::string s = fmt::format("{:.{}g}", v, digits);
  if (s.find('e') == std::string::npos)
    return s;
  return fmt::format("{:.{}f}", v, digits + 2); // tiny: plain decimals read better
}

std::string format_seconds(double s) {
  if (!std::isfinite(s) || s < 0)
    return "–";
  if (s == 0)
    return "0 s";
  if (s < 1e-3)
    return fmt::format("{} µs", format_number(s * 1e6));
  if (s < 1)
    return fmt::format("{} ms", format_number(s * 1e3));
  if (s < 120)
    return fmt::format("{} s", format_number(s));
  long long t = std::llround(s);
  if (t < 3600)
    return fmt::format("{} min {:02} s", t / 60, t % 60);
  return fmt::format("{} h {:02} min", t / 3600, t % 3600 / 60);
}

std::string table(const std::vector<std::string>& headers,
                  const std::vector<std::vector<std::string>>& rows, const std::string& css_class) {
  std::vector<bool> numeric;
  std::string s = css_class.empty() ? "<table>" : fmt::format("<table class=\"{}\">", css_class);
  s += "<thead><tr>";
  for (const std::string& h : headers) {
    bool num = !h.empty() && h[0] == '#';
    numeric.push_back(num);
    s += fmt::format("<th{}>{}</th>", num ? " class=\"num\"" : "", escape(num ? h.substr(1) : h));
  }
  s += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    s += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      s += fmt::format("<td{}>{}</td>", i < numeric.size() && numeric[i] ? " class=\"num\"" : "",
                       row[i]);
    s += "</tr>\n";
  }
  s += "</tbody></table>\n";
  return s;
}

std::string note(std::string_view html) {
  return fmt::format("<p class=\"note\">{}</p>\n", html);
}

namespace {
// System fonts only: nothing is fetched. Charts scale with their column; two
// columns from about 1100 px, one below.
constexpr const char* kStyle = R"css(
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --bg: #ffffff; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 48px; }
h1 { font-size: 26px; margin: 8px 0 4px; }
h2 { font-size: 20px; margin: 36px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 18px 0 6px; }
p { margin: 6px 0; }
.note { color: var(--muted); font-size: 13.5px; }
.sampled { background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px; padding: 6px 10px;
  color: #4d2d00; font-size: 13.5px; }
.warn { background: #fff1f0; border: 1px solid #f5a3a3; border-radius: 6px; padding: 6px 10px;
  font-size: 13.5px; }
nav { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 14px; margin: 10px 0 0; }
nav a { color: #0969da; text-decoration: none; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0 6px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px;
  min-width: 130px; }
.card .v { font-size: 22px; font-weight: 600; }
.card .k { font-size: 12.5px; color: var(--muted); }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 14px; }
.charts.three { grid-template-columns: repeat(auto-fit, minmax(380px, 1fr)); }
svg.chart { width: 100%; height: auto; display: block; background: #fff; margin: 6px 0;
  border: 1px solid var(--line); border-radius: 6px; }
svg.chart text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #1f2328; }
svg.chart .ct { font-size: 14px; font-weight: 600; }
svg.chart .lt { font-size: 11.5px; }
svg.chart .tick text { font-size: 11px; fill: #59636e; }
svg.chart .al { font-size: 12px; fill: #1f2328; }
svg.chart .hl { font-size: 11px; font-weight: 600; }
svg.chart .grid line { stroke: #eaeef2; stroke-width: 1; }
svg.chart .frame { fill: none; stroke: #8c959f; stroke-width: 1; }
svg.chart .ln { fill: none; stroke-width: 2.2; stroke-linejoin: round; }
svg.chart .pt { fill-opacity: 0.75; }
svg.chart .px, svg.chart .lx { stroke-width: 1.4; fill: none; }
svg.chart .best, svg.chart .lb { stroke: #1f2328; stroke-width: 1.2; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 13.5px; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.run { white-space: nowrap; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
pre, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
  font-size: 12.5px; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px;
  overflow-x: auto; white-space: pre; margin: 6px 0; }
pre.wrap { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: 4px 0 10px; }
summary { cursor: pointer; color: #0969da; font-size: 13.5px; }
.empty { border: 1px dashed var(--line); border-radius: 6px; display: flex; align-items: center;
  justify-content: center; padding: 16px; color: var(--muted); font-size: 13.5px; text-align: center;
  min-height: 120px; }
)css";
} // namespace

std::string page(const std::string& title, const std::string& summary,
                 const std::vector<Section>& sections) {
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  s += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n", escape(title),
                   kStyle);
  s += fmt::format("<h1>{}</h1>\n", escape(title));
  s += summary;
  s += "<nav>";
  for (const Section& sec : sections)
    s += fmt::format("<a href=\"#{}\">{}</a>", sec.id, escape(sec.title));
  s += "</nav>\n";
  for (const Section& sec : sections)
    s += fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n{}</section>\n", sec.id, escape(sec.title),
                     sec.body);
  s += "</main>\n</body>\n</html>\n";
  return s;
}

} // namespace kiln::report
