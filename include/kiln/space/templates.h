// Hand-written schedule templates with knobs (AutoTVM), the alternative to
// sketches: an engineer writes the schedule of one kind of operator once, the
// way a TVM x86 schedule is written, and leaves its tile sizes, loop orders
// and annotations open as knobs (config_space.h). The tuner then searches
// the knobs.
//
// A template first checks that the DAG has the shape it schedules (a 2-D
// product, a convolution, …) and refuses other DAGs with an Error that says
// why; bound to a DAG, it defines its knobs and turns each config into plain
// schedule steps, so measurement, records and replay see ordinary States.
//
// The templates (docs/templates.md):
//  - matmul: C[i, j] = sum(… for k) alone; register tile by a 3-level split
//    of i and j, k split in two, optionally accumulated in C.local;
//  - dense: the same product followed by element-wise stages (bias, ReLU),
//    which are inlined into the output; the product is computed per register
//    tile of the output (TVM's dense_pack with fused consumers);
//  - conv2d_nchw: a padding stage and conv[n, k, y, x] = sum(… for rc, ry, rx);
//    output-channel × row × column register tile, input channels split,
//    candidate orders of the reduction loops.
#ifndef KILN_SPACE_TEMPLATES_H
#define KILN_SPACE_TEMPLATES_H

#include "kiln/ir/compute_dag.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/space/config_space.h"
#include "kiln/space/space_params.h"
#include "kiln/support/error.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::space {

/// A template bound to one DAG: its knobs and its schedule function.
class Template {
public:
  virtual ~Template() = default;

  virtual std::string_view name() const = 0;
  const ir::ComputeDAG& dag() const { return dag_; }
  const ConfigSpace& space() const { return space_; }

  /// The schedule of a config of space(), as steps. Every config of the
  /// space gives steps that State::apply accepts.
  virtual std::vector<schedule::Step> steps(const KnobConfig& config) const = 0;

protected:
  explicit Template(ir::ComputeDAG dag) : dag_(std::move(dag)) {}
  ir::ComputeDAG dag_;
  ConfigSpace space_;
};

/// One entry of the list of templates.
struct TemplateInfo {
  std::string name;
  std::string summary; ///< the shape of op it schedules
  /// Binds the template to a DAG; a "template-mismatch" Error says why the
  /// DAG does not have the shape the template schedules.
  Expected<std::unique_ptr<Template>> (*bind)(const ir::ComputeDAG& dag, const SpaceParams& params);
};

/// Every template, in the order match_template tries them.
const std::vector<TemplateInfo>& templates();

/// The template called `name` bound to `dag`; "unknown-template" names the
/// templates, "template-mismatch" says why the DAG does not fit.
Expected<std::unique_ptr<Template>> make_template(std::string_view name, const ir::ComputeDAG& dag,
                                                  const SpaceParams& params);

/// The first template that fits `dag`; "no-matching-template" lists every
/// template and why it refused.
Expected<std::unique_ptr<Template>> match_template(const ir::ComputeDAG& dag,
                                                   const SpaceParams& params);

} // namespace kiln::space

#endif
