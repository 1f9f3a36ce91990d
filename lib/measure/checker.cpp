#include "kiln/measure/checker.h"

#include "kiln/ir/interpreter.h"
#include "kiln/measure/bytes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>

namespace kiln::measure {

std::string CheckReport::describe() const {
  std::string what = sampled() ? fmt::format("{} of {} elements (seeded sample)", checked, total)
                               : fmt::format("all {} elements", total);
  if (passed)
    return fmt::format("ok: {} match the interpreter (max abs error {:.3g}, max rel error {:.3g})",
                       what, max_abs_error, max_rel_error);
  return fmt::format("WRONG ANSWER: {} checked; first mismatch {}; max abs error {:.3g}", what,
                     first_mismatch, max_abs_error);
}

static std::vector<std::int64_t> unflatten(std::int64_t flat,
                                           const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

/// Which elements of an output to compare, in increasing order.
static std::vector<std::int64_t> points_to_check(std::int64_t total, bool full,
                                                 const CheckOptions& options, int output) {
  std::vector<std::int64_t> points;
  if (full || total <= options.sample_points) {
    points.resize(total);
    for (std::int64_t i = 0; i < total; ++i)
      points[i] = i;
    return points;
  }
  std::mt19937_64 rng(options.seed + static_cast<std::uint64_t>(output));
  std::uniform_int_distribution<std::int64_t> pick(0, total - 1);
  std::set<std::int64_t> chosen{0, total - 1};
  while (static_cast<int>(chosen.size()) < options.sample_points)
    chosen.insert(pick(rng));
  return {chosen.begin(), chosen.end()};
}

namespace {
/// Accumulates element comparisons of one output into a report.
class OutputComparer {
public:
  OutputComparer(CheckReport& report, const ir::Stage& stage, const CheckOptions& options,
                 double scale)
      : report_(report), stage_(stage), scale_(scale), exact_(ir::is_int(stage.dtype)),
        rtol_(stage.dtype == ir::ScalarType::F64 ? 1e-9 : options.rtol),
        atol_(stage.dtype == ir::ScalarType::F64 ? 1e-9 : options.atol) {
    report_.total += stage.num_elements();
  }

  void compare(std::int64_t flat, double got, double want) {
    ++report_.checked;
    bool ok;
    if (std::isnan(want) || std::isnan(got)) {
      ok = std::isnan(want) && std::isnan(got);
    } else if (std::isinf(want) || std::isinf(got)) {
      ok = got == want;
    } else {
      double err = std::fabs(got - want);
      report_.max_abs_error = std::max(report_.max_abs_error, err);
      report_.max_rel_error =
          std::max(report_.max_rel_error, err / std::max(std::fabs(want), 1e-30));
      ok = exact_ ? got == want : err <= rtol_ * std::fabs(want) + atol_ * scale_;
    }
    if (ok || !report_.passed)
      return;
    report_.passed = false;
    report_.first_mismatch =
        fmt::format("{}[{}]: got {}, want {}", stage_.name,
                    fmt::join(unflatten(flat, stage_.shape()), ", "), got, want);
  }

  /// compare() for a whole output: one tight pass when every element is
  /// finite and within tolerance (the common case: a candidate's output is
  /// compared on every trial), else element by element for the report.
  void compare_all(const std::vector<double>& got, const std::vector<double>& want) {
    const size_t n = std::min(got.size(), want.size());
    if (!exact_) {
      double max_abs = report_.max_abs_error, max_rel = report_.max_rel_error;
      bool clean = true;
      for (size_t i = 0; i < n; ++i) {
        double err = std::fabs(got[i] - want[i]);
        double mag = std::fabs(want[i]);
        clean &= err <= rtol_ * mag + atol_ * scale_ && mag <= kMaxFinite; // NaN fails both
        max_abs = std::max(max_abs, err);
        max_rel = std::max(max_rel, err / std::max(mag, 1e-30));
      }
      if (clean) {
        report_.checked += static_cast<std::int64_t>(n);
        report_.max_abs_error = max_abs;
        report_.max_rel_error = max_rel;
        return;
      }
    }
    for (size_t i = 0; i < n; ++i)
      compare(static_cast<std::int64_t>(i), got[i], want[i]);
  }

private:
  static constexpr double kMaxFinite = std::numeric_limits<double>::max();
  CheckReport& report_;
  const ir::Stage& stage_;
  double scale_;
  bool exact_;
  double rtol_, atol_;
};

} // namespace

double max_finite_abs(const std::vector<double>& values) {
  double scale = 0;
  for (double v : values)
    if (std::isfinite(v))
      scale = std::max(scale, std::fabs(v));
  return scale;
}

CheckReport check_outputs(const ir::ComputeDAG& dag, const ArgumentBuffers& buffers,
                          const CheckOptions& options) {
  ir::Interpreter interp(dag, buffers.inputs_as_double());
  bool full = dag.flop_count() <= options.full_check_max_flops;
  CheckReport report;
  for (int arg = 0; arg < buffers.size(); ++arg) {
    const ir::Stage& s = dag.stage(buffers.stage_of(arg));
    if (!s.is_output)
      continue;
    std::vector<std::int64_t> points = points_to_check(s.num_elements(), full, options, arg);
    std::vector<double> want(points.size());
    for (size_t p = 0; p < points.size(); ++p)
      want[p] = interp.at(buffers.stage_of(arg), unflatten(points[p], s.shape()));
    OutputComparer cmp(report, s, options, max_finite_abs(want));
    for (size_t p = 0; p < points.size(); ++p)
      cmp.compare(points[p], buffers.value(arg, points[p]), want[p]);
  }
  return report;
}

CheckReport compare_outputs(const ir::ComputeDAG& dag, const ArgumentBuffers& buffers,
                            const std::vector<std::vector<double>>& expected,
                            const CheckOptions& options, const std::vector<double>& scales) {
  CheckReport report;
  size_t out = 0;
  for (int arg = 0; arg < buffers.size(); ++arg) {
    const ir::Stage& s = dag.stage(buffers.stage_of(arg));
    if (!s.is_output)
      continue;
    const std::vector<double>& want = expected.at(out);
    double scale = out < scales.size() ? scales[out] : max_finite_abs(want);
    ++out;
    OutputComparer cmp(report, s, options, scale);
    cmp.compare_all(buffers.values(arg), want);
  }
  return report;
}

void write_check_report(ByteWriter& w, const CheckReport& r) {
  w.put(r.passed);
  w.put(r.checked);
  w.put(r.total);
  w.put(r.max_abs_error);
  w.put(r.max_rel_error);
  w.put_string(r.first_mismatch);
}

CheckReport read_check_report(ByteReader& r) {
  CheckReport c;
  c.passed = r.get<bool>();
  c.checked = r.get<std::int64_t>();
  c.total = r.get<std::int64_t>();
  c.max_abs_error = r.get<double>();
  c.max_rel_error = r.get<double>();
  c.first_mismatch = r.get_string();
  return c;
}

void write_check_options(ByteWriter& w, const CheckOptions& o) {
  w.put(o.full_check_max_flops);
  w.put<std::int32_t>(o.sample_points);
  w.put(o.seed);
  w.put(o.rtol);
  w.put(o.atol);
}

CheckOptions read_check_options(ByteReader& r) {
  CheckOptions o;
  o.full_check_max_flops = r.get<double>();
  o.sample_points = r.get<std::int32_t>();
  o.seed = r.get<std::uint64_t>();
  o.rtol = r.get<double>();
  o.atol = r.get<double>();
  return o;
}

} // namespace kiln::measure
