// Shared by the templates (private to lib/space): checking that a DAG has the
// shape a template schedules, and writing steps the way a TVM schedule reads.
#ifndef KILN_LIB_SPACE_TEMPLATE_UTIL_H
#define KILN_LIB_SPACE_TEMPLATE_UTIL_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/support/error.h"

#include <string>
#include <vector>

namespace kiln::space::detail {

/// The "template-mismatch" Error of template `name` on `dag`.
Error mismatch(std::string_view name, const ir::ComputeDAG& dag, const std::string& why);

/// Compute stages (not placeholders), in DAG order.
std::vector<int> compute_stages(const ir::ComputeDAG& dag);

/// Stage names, "a, b, c".
std::string stage_names(const ir::ComputeDAG& dag, const std::vector<int>& stages);

/// True when `consumer` reads `producer` only element-wise: no reduction,
/// the same shape, and every load of the producer indexed by the consumer's
/// own axes in order.
bool reads_elementwise(const ir::Stage& consumer, const ir::Stage& producer);

/// Whether `body` reads `tensor`, and every time at exactly `vars`, one
/// plain variable per dimension.
bool reads_exactly(const ir::Expr& body, const std::string& tensor,
                   const std::vector<std::string>& vars);

/// Appends steps in the order a TVM schedule writes them.
class Schedule {
public:
  explicit Schedule(std::vector<schedule::Step>& out) : out_(out) {}

  /// Splits `iter` of `stage` by the lengths of a split knob (outer first;
  /// the outer length is implied) and returns the new loops, outer first.
  std::vector<std::string> split(const std::string& stage, const std::string& iter,
                                 const std::vector<std::int64_t>& lengths);
  void reorder(const std::string& stage, std::vector<std::string> order);
  /// Fuses `iters` (two or more) and returns the fused loop; one loop is
  /// returned as it is.
  std::string fuse(const std::string& stage, const std::vector<std::string>& iters);
  void compute_at(const std::string& stage, const std::string& target, const std::string& iter);
  void compute_inline(const std::string& stage);
  /// Returns the name of the local stage.
  std::string cache_write(const std::string& stage);
  void parallel(const std::string& stage, const std::string& iter);
  void vectorize(const std::string& stage, const std::string& iter);
  void unroll(const std::string& stage, const std::string& iter);

private:
  std::vector<schedule::Step>& out_;
};

} // namespace kiln::space::detail

#endif
