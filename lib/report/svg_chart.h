// A small SVG plotting helper: one chart with two axes (linear, log or
// ordinal, with ticks, grid lines and labelled units), a title, a legend
// above the plot, and lines, step lines, markers, rectangles, horizontal
// reference lines and a continuous colour bar. Output is plain SVG text that
// scales to its container (viewBox), with native tooltips (<title>) instead
// of script.
#ifndef KILN_REPORT_SVG_CHART_H
#define KILN_REPORT_SVG_CHART_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::report {

enum class Scale : std::uint8_t {
  Linear,
  Log10,   ///< positive values only; ticks at decades (and 2, 5 on short ranges)
  Ordinal, ///< value i is the band of categories[i]
};

struct Axis {
  std::string label; ///< the quantity and its unit: "wall time (s)"
  Scale scale = Scale::Linear;
  std::optional<double> min, max; ///< fixed range; default: fitted to the data
  bool zero = false;              ///< linear, fitted: include 0
  std::vector<std::string> categories;
};

inline Axis linear_axis(std::string label, bool zero = true) {
  return Axis{std::move(label), Scale::Linear, {}, {}, zero, {}};
}
inline Axis log_axis(std::string label) {
  return Axis{std::move(label), Scale::Log10, {}, {}, false, {}};
}
inline Axis ordinal_axis(std::string label, std::vector<std::string> categories) {
  return Axis{std::move(label), Scale::Ordinal, {}, {}, false, std::move(categories)};
}

struct XY {
  double x = 0, y = 0;
};

enum class Shape : std::uint8_t { Circle, Cross, Star };

struct Marker {
  double x = 0, y = 0;
  std::string colour;
  std::string tip; ///< tooltip text
  double radius = 3;
};

class SvgChart {
public:
  /// `id` names the <svg> element (unique within a page).
  SvgChart(std::string id, std::string title, Axis x, Axis y, int width = 640, int height = 380);

  /// A polyline through `points` (in x order). `step` holds each value until
  /// the next point (best-so-far curves).
  void line(std::string name, std::string colour, std::vector<XY> points, bool step = false,
            bool dashed = false);
  /// Markers of one kind; a non-empty `name` adds one legend entry.
  void markers(std::string name, std::string colour, std::vector<Marker> marks,
               Shape shape = Shape::Circle);
  /// A horizontal reference line across the plot, labelled at its right end
  /// (and in the legend, where labels of close lines stay apart).
  void hline(double y, std::string label, std::string colour, bool in_legend = true);
  /// A rectangle in data coordinates (bars).
  void rect(double x0, double x1, double y0, double y1, std::string colour, std::string tip);
  /// A legend entry for series drawn with rect().
  void legend(std::string name, std::string colour);
  /// A continuous colour legend for markers coloured with viridis().
  void colour_bar(std::string label, double lo, double hi);

  std::string render() const;

private:
  struct Line {
    std::string name, colour;
    std::vector<XY> points;
    bool step, dashed;
  };
  struct MarkerSet {
    std::string name, colour;
    std::vector<Marker> marks;
    Shape shape;
  };
  struct HLine {
    double y;
    std::string label, colour;
  };
  struct Rect {
    double x0, x1, y0, y1;
    std::string colour, tip;
  };
  struct LegendEntry {
    std::string name, colour;
    enum Kind : std::uint8_t { Line, Dashed, Dot, Cross, Star, Box } kind;
  };
  struct Range {
    double lo, hi;
  };
  Range data_range(bool x) const;

  std::string id_, title_;
  Axis x_, y_;
  int width_, height_;
  std::vector<Line> lines_;
  std::vector<MarkerSet> markers_;
  std::vector<HLine> hlines_;
  std::vector<Rect> rects_;
  std::vector<LegendEntry> legend_;
  std::optional<std::pair<std::string, Range>> colour_bar_;
};

/// A categorical colour (Okabe–Ito, safe for colour blindness), cycling.
std::string palette(std::size_t i);
/// The viridis colour map at t in [0, 1] (dark purple → yellow).
std::string viridis(double t);
/// A short tick label: "0.25", "12", "1500", "25k", "3.2M".
std::string tick_label(double v);

} // namespace kiln::report

#endif
