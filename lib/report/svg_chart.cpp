#include "svg_chart.h"

#include "html.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace kiln::report {

namespace {

constexpr double kTickFont = 11, kCharWidth = 6.2; // average glyph width at 11 px, sans
constexpr double kLegendRow = 18, kTitleHeight = 26;
constexpr std::size_t kMaxCategoryChars = 28;

double text_width(std::string_view s) {
  return static_cast<double>(s.size()) * kCharWidth;
}

std::string shorten(const std::string& s, std::size_t n) {
  return s.size() <= n ? s : s.substr(0, n - 1) + "…";
}

/// A coordinate with one decimal: enough at screen resolution, and keeps a
/// 4,000-point chart small.
std::string px(double v) {
  return fmt::format("{:.1f}", v);
}

bool usable(Scale s, double v) {
  return std::isfinite(v) && (s != Scale::Log10 || v > 0);
}

/// Ticks and the domain they span (the data range widened to whole ticks).
struct Ticks {
  double lo = 0, hi = 1; ///< in axis units (log10 of the value on a log axis)
  std::vector<double> at;
  std::vector<std::string> labels;
};

/// `fixed`: the range was given, so ticks fall inside it instead of widening it.
Ticks linear_ticks(double lo, double hi, int target, bool fixed) {
  if (hi <= lo) {
    double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  double raw = (hi - lo) / target;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  Ticks t;
  t.lo = std::floor(lo / step + 1e-9) * step;
  t.hi = std::ceil(hi / step - 1e-9) * step;
  double first = t.lo;
  if (fixed) {
    first = std::ceil(lo / step - 1e-9) * step;
    t.lo = lo;
    t.hi = hi;
  }
  for (double v = first; v <= t.hi + step * 1e-6; v += step) {
    double r = std::abs(v) < step * 1e-6 ? 0 : v; // no "-0"
    t.at.push_back(r);
    t.labels.push_back(tick_label(r));
  }
  return t;
}

Ticks log_ticks(double lo, double hi) {
  int a = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  int b = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  if (b <= a)
    b = a + 1;
  int every = b - a > 8 ? 2 : 1; // at most ~8 labelled decades
  Ticks t;
  t.lo = a;
  t.hi = b;
  for (int d = a; d <= b; ++d) {
    double base = std::pow(10, d);
    if ((d - a) % every == 0) {
      t.at.push_back(d);
      t.labels.push_back(tick_label(base));
    }
    if (b - a <= 2 && d < b)
      for (double m : {2.0, 5.0}) {
        t.at.push_back(std::log10(m * base));
        t.labels.push_back(tick_label(m * base));
      }
  }
  return t;
}

Ticks ordinal_ticks(const std::vector<std::string>& categories) {
  Ticks t;
  std::size_t n = std::max<std::size_t>(categories.size(), 1);
  t.lo = -0.5;
  t.hi = static_cast<double>(n) - 0.5;
  std::size_t every = (categories.size() + 19) / 20; // at most ~20 labels
  for (std::size_t i = 0; i < categories.size(); i += std::max<std::size_t>(every, 1)) {
    t.at.push_back(static_cast<double>(i));
    t.labels.push_back(shorten(categories[i], kMaxCategoryChars));
  }
  return t;
}

/// Maps axis units to pixels.
struct Mapper {
  Scale scale;
  double lo, hi, p0, p1;
  double unit(double v) const { return scale == Scale::Log10 ? std::log10(v) : v; }
  double operator()(double v) const { return p0 + (unit(v) - lo) / (hi - lo) * (p1 - p0); }
  double at_unit(double u) const { return p0 + (u - lo) / (hi - lo) * (p1 - p0); }
};

std::string star(double cx, double cy, double r) {
  std::string pts;
  for (int i = 0; i < 10; ++i) {
    double a = -M_PI / 2 + i * M_PI / 5;
    double rr = i % 2 ? r * 0.45 : r;
    pts +=
        fmt::format("{}{},{}", i ? " " : "", px(cx + rr * std::cos(a)), px(cy + rr * std::sin(a)));
  }
  return pts;
}

std::string tip(const std::string& text) {
  return text.empty() ? "" : "<title>" + escape(text) + "</title>";
}

} // namespace

std::string tick_label(double v) {
  double a = std::abs(v);
  if (a >= 1e6)
    return fmt::format("{:.3g}M", v / 1e6);
  if (a >= 1e4)
    return fmt::format("{:.3g}k", v / 1e3);
  return fmt::format("{:.4g}", v);
}

std::string palette(std::size_t i) {
  // Okabe–Ito, blue first; yellow last because it is faint on white.
  static constexpr std::array<const char*, 8> kColours = {
      "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#56B4E9", "#E69F00", "#000000", "#F0E442"};
  return kColours[i % kColours.size()];
}

std::string viridis(double t) {
  static constexpr std::array<std::array<double, 3>, 9> kStops = {{{68, 1, 84},
                                                                   {71, 44, 122},
                                                                   {59, 81, 139},
                                                                   {44, 113, 142},
                                                                   {33, 144, 141},
                                                                   {39, 173, 129},
                                                                   {92, 200, 99},
                                                                   {170, 220, 50},
                                                                   {253, 231, 37}}};
  t = std::isfinite(t) ? std::clamp(t, 0.0, 1.0) : 0.0;
  double pos = t * (kStops.size() - 1);
  std::size_t i = std::min<std::size_t>(static_cast<std::size_t>(pos), kStops.size() - 2);
  double f = pos - static_cast<double>(i);
  auto mix = [&](int c) {
    return static_cast<int>(std::lround(kStops[i][c] + (kStops[i + 1][c] - kStops[i][c]) * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2));
}

SvgChart::SvgChart(std::string id, std::string title, Axis x, Axis y, int width, int height)
    : id_(std::move(id)), title_(std::move(title)), x_(std::move(x)), y_(std::move(y)),
      width_(width), height_(height) {}

void SvgChart::line(std::string name, std::string colour, std::vector<XY> points, bool step,
                    bool dashed) {
  if (!name.empty())
    legend_.push_back({name, colour, dashed ? LegendEntry::Dashed : LegendEntry::Line});
  lines_.push_back({std::move(name), std::move(colour), std::move(points), step, dashed});
}

void SvgChart::markers(std::string name, std::string colour, std::vector<Marker> marks,
                       Shape shape) {
  if (!name.empty())
    legend_.push_back({name, colour,
                       shape == Shape::Cross  ? LegendEntry::Cross
                       : shape == Shape::Star ? LegendEntry::Star
                                              : LegendEntry::Dot});
  markers_.push_back({std::move(name), std::move(colour), std::move(marks), shape});
}

void SvgChart::hline(double y, std::string label, std::string colour, bool in_legend) {
  if (in_legend)
    legend_.push_back({label, colour, LegendEntry::Dashed});
  hlines_.push_back({y, std::move(label), std::move(colour)});
}

void SvgChart::rect(double x0, double x1, double y0, double y1, std::string colour,
                    std::string tip) {
  rects_.push_back({x0, x1, y0, y1, std::move(colour), std::move(tip)});
}

void SvgChart::legend(std::string name, std::string colour) {
  legend_.push_back({std::move(name), std::move(colour), LegendEntry::Box});
}

void SvgChart::colour_bar(std::string label, double lo, double hi) {
  colour_bar_ = {std::move(label), Range{lo, hi}};
}

SvgChart::Range SvgChart::data_range(bool x) const {
  const Axis& axis = x ? x_ : y_;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  auto add = [&](double v) {
    if (usable(axis.scale, v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  };
  for (const Line& l : lines_)
    for (const XY& p : l.points)
      add(x ? p.x : p.y);
  for (const MarkerSet& m : markers_)
    for (const Marker& p : m.marks)
      add(x ? p.x : p.y);
  for (const Rect& r : rects_) {
    add(x ? r.x0 : r.y0);
    add(x ? r.x1 : r.y1);
  }
  if (!x)
    for (const HLine& h : hlines_)
      add(h.y);
  if (axis.scale == Scale::Linear && axis.zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (lo > hi) // no data
    return axis.scale == Scale::Log10 ? Range{1, 10} : Range{0, 1};
  if (axis.min)
    lo = *axis.min;
  if (axis.max)
    hi = *axis.max;
  return {lo, hi};
}

std::string SvgChart::render() const {
  auto ticks_for = [&](const Axis& axis, Range r, int target) {
    switch (axis.scale) {
    case Scale::Ordinal:
      return ordinal_ticks(axis.categories);
    case Scale::Log10:
      return log_ticks(r.lo, r.hi);
    case Scale::Linear:
      break;
    }
    return linear_ticks(r.lo, r.hi, target, axis.min && axis.max);
  };
  Ticks xt = ticks_for(x_, data_range(true), std::max(3, width_ / 80));
  Ticks yt = ticks_for(y_, data_range(false), std::max(3, height_ / 60));

  // Legend rows, laid out left to right and wrapped.
  struct Placed {
    const LegendEntry* entry;
    double x;
    int row;
  };
  std::vector<Placed> placed;
  double cursor = 10;
  int rows = legend_.empty() ? 0 : 1;
  for (const LegendEntry& e : legend_) {
    double w = 26 + text_width(shorten(e.name, 48)) + 14;
    if (cursor + w > width_ - 8 && cursor > 10) {
      ++rows;
      cursor = 10;
    }
    placed.push_back({&e, cursor, rows - 1});
    cursor += w;
  }

  double label_w = 0;
  for (const std::string& l : yt.labels)
    label_w = std::max(label_w, text_width(l));
  double left = std::max(44.0, label_w + 30);
  double right = width_ - (colour_bar_ ? 78.0 : 18.0);
  double top = kTitleHeight + rows * kLegendRow + 10;
  double bottom = height_ - 44.0;
  Mapper mx{x_.scale, xt.lo, xt.hi, left, right};
  Mapper my{y_.scale, yt.lo, yt.hi, bottom, top};

  std::string s = fmt::format(
      "<svg id=\"{}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" "
      "style=\"max-width:{}px\" role=\"img\" aria-label=\"{}\">\n",
      escape(id_), width_, height_, width_, escape(title_));
  s += fmt::format("<text class=\"ct\" x=\"10\" y=\"18\">{}</text>\n", escape(title_));

  for (const Placed& p : placed) {
    double y = kTitleHeight + p.row * kLegendRow + 6;
    const LegendEntry& e = *p.entry;
    switch (e.kind) {
    case LegendEntry::Line:
    case LegendEntry::Dashed:
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"2.5\"{}/>",
                       px(p.x), px(y), px(p.x + 20), px(y), e.colour,
                       e.kind == LegendEntry::Dashed ? " stroke-dasharray=\"5 3\"" : "");
      break;
    case LegendEntry::Dot:
      s += fmt::format("<circle class=\"lg\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>",
                       px(p.x + 10), px(y), e.colour);
      break;
    case LegendEntry::Cross:
      s += fmt::format("<path class=\"lx\" d=\"M{0} {1}L{2} {3}M{0} {3}L{2} {1}\" stroke=\"{4}\"/>",
                       px(p.x + 6), px(y - 4), px(p.x + 14), px(y + 4), e.colour);
      break;
    case LegendEntry::Star:
      s += fmt::format("<polygon class=\"lb\" points=\"{}\" fill=\"{}\"/>", star(p.x + 10, y, 6),
                       e.colour);
      break;
    case LegendEntry::Box:
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>",
                       px(p.x + 3), px(y - 5), e.colour);
      break;
    }
    s += fmt::format("<text class=\"lt\" x=\"{}\" y=\"{}\">{}</text>\n", px(p.x + 26), px(y + 4),
                     escape(shorten(e.name, 48)));
  }

  // Grid and ticks.
  s += "<g class=\"grid\">";
  for (double u : xt.at)
    s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>", px(mx.at_unit(u)),
                     px(top), px(bottom));
  for (double u : yt.at)
    s += fmt::format("<line x1=\"{1}\" y1=\"{0}\" x2=\"{2}\" y2=\"{0}\"/>", px(my.at_unit(u)),
                     px(left), px(right));
  s += "</g>\n";
  s += fmt::format("<rect class=\"frame\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>\n",
                   px(left), px(top), px(right - left), px(bottom - top));
  s += "<g class=\"tick\">";
  for (std::size_t i = 0; i < xt.at.size(); ++i)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                     px(mx.at_unit(xt.at[i])), px(bottom + kTickFont + 5), escape(xt.labels[i]));
  for (std::size_t i = 0; i < yt.at.size(); ++i)
    s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", px(left - 6),
                     px(my.at_unit(yt.at[i]) + 4), escape(yt.labels[i]));
  s += "</g>\n";
  s += fmt::format("<text class=\"al\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                   px((left + right) / 2), px(height_ - 8.0), escape(x_.label));
  s += fmt::format("<text class=\"al\" transform=\"translate(14,{}) rotate(-90)\" "
                   "text-anchor=\"middle\">{}</text>\n",
                   px((top + bottom) / 2), escape(y_.label));

  // Data, clipped to the plot so a fixed range cuts instead of spilling.
  s += fmt::format("<clipPath id=\"{0}-clip\"><rect x=\"{1}\" y=\"{2}\" width=\"{3}\" "
                   "height=\"{4}\"/></clipPath>\n<g clip-path=\"url(#{0}-clip)\">\n",
                   escape(id_), px(left - 6), px(top - 6), px(right - left + 12),
                   px(bottom - top + 12));
  for (const Rect& r : rects_) {
    if (!usable(x_.scale, r.x0) || !usable(x_.scale, r.x1) || !usable(y_.scale, r.y0) ||
        !usable(y_.scale, r.y1))
      continue;
    double x0 = mx(r.x0), x1 = mx(r.x1), y0 = my(r.y0), y1 = my(r.y1);
    s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\">{}</rect>",
                     px(std::min(x0, x1)), px(std::min(y0, y1)), px(std::abs(x1 - x0)),
                     px(std::abs(y1 - y0)), r.colour, tip(r.tip));
  }
  for (const Line& l : lines_) {
    std::string d;
    const XY* last = nullptr;
    for (const XY& p : l.points) {
      if (!usable(x_.scale, p.x) || !usable(y_.scale, p.y))
        continue;
      if (!last)
        d += fmt::format("M{} {}", px(mx(p.x)), px(my(p.y)));
      else if (l.step)
        d += fmt::format("H{}V{}", px(mx(p.x)), px(my(p.y)));
      else
        d += fmt::format("L{} {}", px(mx(p.x)), px(my(p.y)));
      last = &p;
    }
    if (!last)
      continue;
    s += fmt::format("<path class=\"ln\" d=\"{}\" stroke=\"{}\"{}/>", d, l.colour,
                     l.dashed ? " stroke-dasharray=\"6 4\"" : "");
    // The end of each line is marked, so a one-point line still shows.
    s +=
        fmt::format("<circle class=\"end\" cx=\"{}\" cy=\"{}\" r=\"3.5\" fill=\"{}\">{}</circle>\n",
                    px(mx(last->x)), px(my(last->y)), l.colour,
                    tip(fmt::format("{}: {}", l.name, tick_label(last->y))));
  }
  for (const MarkerSet& m : markers_) {
    s += "<g>";
    for (const Marker& p : m.marks) {
      if (!usable(x_.scale, p.x) || !usable(y_.scale, p.y))
        continue;
      double cx = mx(p.x), cy = my(p.y), r = p.radius;
      const std::string& colour = p.colour.empty() ? m.colour : p.colour;
      switch (m.shape) {
      case Shape::Circle:
        s +=
            fmt::format("<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\">{}</circle>",
                        px(cx), px(cy), px(r), colour, tip(p.tip));
        break;
      case Shape::Cross:
        s += fmt::format("<path class=\"px\" d=\"M{0} {1}L{2} {3}M{0} {3}L{2} {1}\" "
                         "stroke=\"{4}\">{5}</path>",
                         px(cx - r), px(cy - r), px(cx + r), px(cy + r), colour, tip(p.tip));
        break;
      case Shape::Star:
        s += fmt::format("<polygon class=\"best\" points=\"{}\" fill=\"{}\">{}</polygon>",
                         star(cx, cy, r), colour, tip(p.tip));
        break;
      }
    }
    s += "</g>\n";
  }
  s += "</g>\n";

  for (const HLine& h : hlines_) {
    if (!usable(y_.scale, h.y))
      continue;
    double y = my(h.y);
    s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                     "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>",
                     px(left), px(y), px(right), px(y), h.colour);
    s += fmt::format("<text class=\"hl\" x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{}\">{} "
                     "({})</text>\n",
                     px(right - 4), px(y - 4), h.colour, escape(shorten(h.label, 40)),
                     tick_label(h.y));
  }

  if (colour_bar_) {
    const auto& [label, range] = *colour_bar_;
    constexpr int kSteps = 24;
    double x = right + 14, h = (bottom - top) / kSteps;
    for (int i = 0; i < kSteps; ++i)
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"{}\" fill=\"{}\"/>", px(x),
                       px(bottom - (i + 1) * h), px(h + 0.5), viridis((i + 0.5) / kSteps));
    s += fmt::format("<g class=\"tick\"><text x=\"{0}\" y=\"{1}\">{2}</text>"
                     "<text x=\"{0}\" y=\"{3}\">{4}</text></g>",
                     px(x + 16), px(top + 9), tick_label(range.hi), px(bottom),
                     tick_label(range.lo));
    s += fmt::format("<text class=\"al\" transform=\"translate({},{}) rotate(-90)\" "
                     "text-anchor=\"middle\">{}</text>\n",
                     px(x + 52), px((top + bottom) / 2), escape(label));
  }
  s += "</svg>\n";
  return s;
}

} // namespace kiln::report
