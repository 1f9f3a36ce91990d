// Templates: which DAGs they fit (and why they refuse the others), their
// knobs, and that every config of a small space is a schedule State::apply
// accepts. The property test (test/e2e/template_property_test.cpp) checks
// the answers.
#include "../ir/test_dags.h"

#include "kiln/ir/builder.h"
#include "kiln/ir/parser.h"
#include "kiln/schedule/state.h"
#include "kiln/space/templates.h"

#include <catch2/catch.hpp>

#include <set>

using namespace kiln;
using namespace kiln::space;

namespace {

const SpaceParams kParams{.vector_lanes = 8, .cores = 2};

ir::ComputeDAG op(const std::string& name, const ir::ParamOverrides& shape = {}) {
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + name + ".kop", shape);
  REQUIRE(dag.ok());
  return *dag;
}

std::vector<std::string> knob_names(const Template& t) {
  std::vector<std::string> names;
  for (const Knob& k : t.space().knobs())
    names.push_back(k.name);
  return names;
}

/// Every config replays (small spaces only).
void require_all_configs_apply(const Template& t) {
  std::uint64_t n = *t.space().size();
  for (std::uint64_t i = 0; i < n; ++i) {
    auto state = schedule::State::replay(t.dag(), t.steps(t.space().at(i)));
    if (!state)
      FAIL(t.space().describe(t.space().at(i)) + ": " + state.error().message());
  }
}

} // namespace

TEST_CASE("each op with a template gets the template that fits it", "[space][template]") {
  REQUIRE((*match_template(op("matmul"), kParams))->name() == "matmul");
  REQUIRE((*match_template(op("dense_bias_relu"), kParams))->name() == "dense");
  REQUIRE((*match_template(op("conv2d_nchw"), kParams))->name() == "conv2d_nchw");
  REQUIRE((*match_template(test::matmul_dag(8, 8, 8), kParams))->name() == "matmul");
}

TEST_CASE("the matmul template's knobs", "[space][template]") {
  auto t = make_template("matmul", test::matmul_dag(512, 512, 512), kParams);
  REQUIRE(t.ok());
  REQUIRE(knob_names(**t) == std::vector<std::string>{"tile_y", "tile_x", "tile_k", "reorder_inner",
                                                      "ann_yi", "ann_ki", "parallel",
                                                      "cache_write"});
  const ConfigSpace& sp = (*t)->space();
  // 512 = 2^9: three lengths with the innermost ≤ 16 (rows) or ≤ 32 (4
  // vectors of 8 lanes), two with the innermost ≤ 16.
  REQUIRE(sp.knobs()[0].size() == 40);
  REQUIRE(sp.knobs()[1].size() == 45);
  REQUIRE(sp.knobs()[2].size() == 5);
  REQUIRE(sp.size() == 40u * 45 * 5 * 2 * 2 * 2 * 3 * 2);
}

TEST_CASE("the dense and conv2d_nchw templates' knobs", "[space][template]") {
  auto d = make_template("dense", op("dense_bias_relu"), kParams);
  REQUIRE(d.ok());
  REQUIRE(knob_names(**d) == std::vector<std::string>{"tile_y", "tile_x", "tile_k", "reorder_inner",
                                                      "ann_yi", "ann_ki", "parallel"});
  auto c = make_template("conv2d_nchw", op("conv2d_nchw"), kParams);
  REQUIRE(c.ok());
  REQUIRE(knob_names(**c) == std::vector<std::string>{"tile_oc", "tile_oh", "tile_ow", "tile_ic",
                                                      "reorder_reduce", "ann_tile", "unroll_kw",
                                                      "parallel", "cache_write", "pad"});
}

TEST_CASE("every config of a small template space is a valid schedule", "[space][template]") {
  require_all_configs_apply(**make_template("matmul", test::matmul_dag(4, 6, 4), kParams));
  require_all_configs_apply(**make_template(
      "dense", op("dense_bias_relu", {{"BATCH", "2"}, {"IN", "4"}, {"OUT", "4"}}), kParams));
  require_all_configs_apply(**make_template(
      "conv2d_nchw",
      op("conv2d_nchw", {{"C", "2"}, {"H", "4"}, {"W", "4"}, {"K", "2"}, {"R", "1"}, {"S", "1"}}),
      kParams));
}

TEST_CASE("different configs give different schedules", "[space][template]") {
  auto t = make_template("matmul", test::matmul_dag(8, 8, 8), kParams);
  std::set<std::string> schedules;
  for (std::uint64_t i = 0; i < *(*t)->space().size(); ++i)
    schedules.insert(schedule::steps_to_json((*t)->steps((*t)->space().at(i))));
  // Configs whose unroll or split choices fall on loops of extent 1 may
  // coincide; nearly all differ.
  REQUIRE(schedules.size() * 10 > *(*t)->space().size() * 9);
}

TEST_CASE("a template refuses a DAG of another shape and says why", "[space][template]") {
  auto dense_as_matmul = make_template("matmul", op("dense_bias_relu"), kParams);
  REQUIRE(dense_as_matmul.error().id() == "template-mismatch");
  REQUIRE_THAT(dense_as_matmul.error().message(),
               Catch::Contains("element-wise consumers [biased, relu]") &&
                   Catch::Contains("use template 'dense'"));

  auto matmul_as_dense = make_template("dense", op("matmul"), kParams);
  REQUIRE(matmul_as_dense.error().id() == "template-mismatch");
  REQUIRE_THAT(matmul_as_dense.error().message(), Catch::Contains("use template 'matmul'"));

  auto batch = make_template("matmul", op("batch_matmul"), kParams);
  REQUIRE(batch.error().id() == "template-mismatch");
  REQUIRE_THAT(batch.error().message(), Catch::Contains("3 spatial and 1 reduction axes"));

  auto softmax = make_template("dense", op("softmax"), kParams);
  REQUIRE_THAT(softmax.error().message(), Catch::Contains("2 reduction stages"));

  auto conv = make_template("conv2d_nchw", op("matmul"), kParams);
  REQUIRE(conv.error().id() == "template-mismatch");
  REQUIRE_THAT(conv.error().message(),
               Catch::Contains("template 'conv2d_nchw' does not fit op 'matmul'") &&
                   Catch::Contains("2 spatial and 1 reduction axes"));

  auto depthwise = make_template("conv2d_nchw", op("depthwise_conv2d"), kParams);
  REQUIRE(depthwise.error().id() == "template-mismatch");
  REQUIRE_THAT(depthwise.error().message(), Catch::Contains("4 and 3"));

  // NHWC has the axes and inputs of NCHW, not their roles.
  auto nhwc = make_template("conv2d_nchw", op("conv2d_nhwc"), kParams);
  REQUIRE(nhwc.error().id() == "template-mismatch");
  REQUIRE_THAT(nhwc.error().message(), Catch::Contains("reads no input as kernel[y, ry, rx, rc]"));
  REQUIRE(!match_template(op("conv2d_nhwc"), kParams));
  for (const char* blocked : {"conv2d_nchw", "matmul", "dense"})
    REQUIRE(!make_template(blocked, op("conv2d_nchwc"), kParams));

  // The product read by something other than an element-wise chain.
  ir::DAGBuilder b("matmul_transposed_out");
  auto A = b.input("A", {4, 4});
  auto B = b.input("B", {4, 4});
  ir::IterVar k{"k", 4};
  auto C = b.compute("C", {{"i", 4}, {"j", 4}}, [&](const std::vector<ir::Expr>& v) {
    return ir::sum(A(v[0], ir::var(k)) * B(ir::var(k), v[1]), {k});
  });
  auto T = b.compute("T", {{"i", 4}, {"j", 4}},
                     [&](const std::vector<ir::Expr>& v) { return C(v[1], v[0]); });
  b.output(T);
  auto transposed = make_template("dense", std::move(b).build(), kParams);
  REQUIRE(transposed.error().id() == "template-mismatch");
  REQUIRE_THAT(transposed.error().message(), Catch::Contains("chain of element-wise stages"));
}

TEST_CASE("an unknown template or an op no template fits is an error naming the templates",
          "[space][template]") {
  auto unknown = make_template("gemm", op("matmul"), kParams);
  REQUIRE(unknown.error().id() == "unknown-template");
  REQUIRE_THAT(unknown.error().message(),
               Catch::Contains("unknown template 'gemm'; the templates are matmul, dense, "
                               "conv2d_nchw"));
  auto none = match_template(op("softmax"), kParams);
  REQUIRE(none.error().id() == "no-matching-template");
  REQUIRE_THAT(none.error().message(),
               Catch::Contains("no template fits op 'softmax'") &&
                   Catch::Contains("--space sketch") &&
                   Catch::Contains("template 'conv2d_nchw' does not fit op 'softmax'"));
}
