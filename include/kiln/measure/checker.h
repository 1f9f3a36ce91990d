// Checking a kernel's outputs against the reference interpreter.
//
// An element passes when |got - want| <= rtol * |want| + atol * scale, where
// scale is the largest |want| of that output: float kernels accumulate in
// f32 and in another order than the interpreter's doubles, so the error is
// relative to the magnitude of the whole output, not of one element (a sum
// that cancels to ~0 still carries the rounding of its large terms). NaN
// matches only NaN. Defaults: rtol = atol = 1e-4 (f32); 1e-9 for f64;
// integers must match exactly.
#ifndef KILN_MEASURE_CHECKER_H
#define KILN_MEASURE_CHECKER_H

#include "kiln/ir/compute_dag.h"
#include "kiln/measure/argument_buffers.h"

#include <cstdint>
#include <string>

namespace kiln::measure {

struct CheckOptions {
  /// Check every element when the DAG has at most this many flops; above it,
  /// check `sample_points` seeded random elements of each output (plus its
  /// first and last), because the interpreter is slow on purpose.
  double full_check_max_flops = 5e7;
  int sample_points = 2048;
  std::uint64_t seed = 7;
  double rtol = 1e-4, atol = 1e-4;
};

struct CheckReport {
  bool passed = true;
  std::int64_t checked = 0; ///< elements compared
  std::int64_t total = 0;   ///< elements in the outputs
  double max_abs_error = 0;
  double max_rel_error = 0;   ///< |got - want| / max(|want|, tiny)
  std::string first_mismatch; ///< e.g. "C[3, 7]: got 1.5, want 2.25"

  bool sampled() const { return checked < total; }
  std::string describe() const;
};

class ByteWriter;
class ByteReader;
/// A report, and the options, as bytes and back, for a check made in the
/// worker process (bytes.h, worker.h).
void write_check_report(ByteWriter& w, const CheckReport& report);
CheckReport read_check_report(ByteReader& r);
void write_check_options(ByteWriter& w, const CheckOptions& options);
CheckOptions read_check_options(ByteReader& r);

/// The largest finite |value|: the scale `atol` is relative to.
double max_finite_abs(const std::vector<double>& values);

/// Compares every output of `buffers` with `expected` (one row-major vector
/// per output argument, in argument order), with the tolerance above.
/// `scales` (max_finite_abs of each expected output) may be given when the
/// same expected outputs are compared many times.
CheckReport compare_outputs(const ir::ComputeDAG& dag, const ArgumentBuffers& buffers,
                            const std::vector<std::vector<double>>& expected,
                            const CheckOptions& options = {},
                            const std::vector<double>& scales = {});

/// Runs the interpreter on the buffers' inputs and compares every output.
/// Throws UserError when the interpreter itself fails (e.g. the op reads
/// out of bounds).
CheckReport check_outputs(const ir::ComputeDAG& dag, const ArgumentBuffers& buffers,
                          const CheckOptions& options = {});

} // namespace kiln::measure

#endif
