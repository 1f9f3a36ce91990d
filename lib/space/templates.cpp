#include "kiln/space/templates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::space {

// Defined in template_gemm.cpp and template_conv2d.cpp.
Expected<std::unique_ptr<Template>> bind_matmul(const ir::ComputeDAG&, const SpaceParams&);
Expected<std::unique_ptr<Template>> bind_dense(const ir::ComputeDAG&, const SpaceParams&);
Expected<std::unique_ptr<Template>> bind_conv2d_nchw(const ir::ComputeDAG&, const SpaceParams&);

const std::vector<TemplateInfo>& templates() {
  static const std::vector<TemplateInfo> list = {
      {"matmul", "C[i, j] = sum(A[i, k] * B[k, j] for k), alone", bind_matmul},
      {"dense", "a 2-D product followed by element-wise stages (bias, ReLU), fused", bind_dense},
      {"conv2d_nchw", "padding + conv[n, k, y, x] = sum(… for rc, ry, rx) in NCHW",
       bind_conv2d_nchw},
  };
  return list;
}

static std::string template_names() {
  std::vector<std::string> names;
  for (const TemplateInfo& t : templates())
    names.push_back(t.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

Expected<std::unique_ptr<Template>> make_template(std::string_view name, const ir::ComputeDAG& dag,
                                                  const SpaceParams& params) {
  for (const TemplateInfo& t : templates())
    if (t.name == name)
      return t.bind(dag, params);
  return Error("unknown-template",
               fmt::format("unknown template '{}'; the templates are {}", name, template_names()));
}

Expected<std::unique_ptr<Template>> match_template(const ir::ComputeDAG& dag,
                                                   const SpaceParams& params) {
  std::string reasons;
  for (const TemplateInfo& t : templates()) {
    auto bound = t.bind(dag, params);
    if (bound)
      return bound;
    reasons += "\n  " + bound.error().message();
  }
  return Error("no-matching-template",
               fmt::format("no template fits op '{}' (the templates are {}); use --space sketch, "
                           "which fits every op:{}",
                           dag.name(), template_names(), reasons));
}

} // namespace kiln::space
