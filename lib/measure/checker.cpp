#include "kiln/measure/checker.h"

#include "kiln/ir/interpreter.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
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
    double scale = 0;
    for (size_t p = 0; p < points.size(); ++p) {
      want[p] = interp.at(buffers.stage_of(arg), unflatten(points[p], s.shape()));
      if (std::isfinite(want[p]))
        scale = std::max(scale, std::fabs(want[p]));
    }
    bool exact = ir::is_int(s.dtype);
    double rtol = s.dtype == ir::ScalarType::F64 ? 1e-9 : options.rtol;
    double atol = s.dtype == ir::ScalarType::F64 ? 1e-9 : options.atol;
    report.total += s.num_elements();
    for (size_t p = 0; p < points.size(); ++p) {
      double got = buffers.value(arg, points[p]);
      double w = want[p];
      ++report.checked;
      bool ok;
      if (std::isnan(w) || std::isnan(got))
        ok = std::isnan(w) && std::isnan(got);
      else if (std::isinf(w) || std::isinf(got))
        ok = got == w;
      else {
        double err = std::fabs(got - w);
        report.max_abs_error = std::max(report.max_abs_error, err);
        report.max_rel_error = std::max(report.max_rel_error, err / std::max(std::fabs(w), 1e-30));
        ok = exact ? got == w : err <= rtol * std::fabs(w) + atol * scale;
      }
      if (ok || !report.passed) {
        report.passed &= ok;
        continue;
      }
      report.passed = false;
      report.first_mismatch = fmt::format("{}[{}]: got {}, want {}", s.name,
                                          fmt::join(unflatten(points[p], s.shape()), ", "), got, w);
    }
  }
  return report;
}

} // namespace kiln::measure
