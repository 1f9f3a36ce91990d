// Partitioning the tiny networks: anchors with their elementwise consumers
// fused, batch norms folded, identical groups one task with a weight.
#include "model_files.h"

#include "kiln/graph/network.h"
#include "kiln/graph/onnx_import.h"

#include <catch2/catch.hpp>

#include <map>
#include <set>

using namespace kiln;

namespace {

graph::Network load(const std::string& model) {
  auto net = graph::load_network(test::test_model(model + ".onnx"));
  INFO(model << ": " << (net.ok() ? "" : net.error().message()));
  REQUIRE(net.ok());
  return std::move(*net);
}

std::map<std::string, int> weight_by_ops(const graph::Network& net) {
  std::map<std::string, int> w;
  for (const graph::Task& t : net.tasks)
    w[t.ops] += t.weight();
  return w;
}

} // namespace

TEST_CASE("a resnet's convs carry their batch norm, relu and residual add", "[graph][partition]") {
  graph::Network net = load("tiny_resnet");
  // stem, pool, 2 + 2 block convs, the downsample conv, pooling, classifier
  CHECK(net.groups.size() == 9);
  std::map<std::string, int> w = weight_by_ops(net);
  CHECK(w["Conv+BatchNormalization+Relu"] == 3);
  CHECK(w["Conv+BatchNormalization+Add+Relu"] == 2);
  CHECK(w["Conv+BatchNormalization"] == 1); // the downsample
  CHECK(w["MaxPool"] == 1);
  CHECK(w["GlobalAveragePool"] == 1);
  CHECK(w["Reshape+Gemm"] + w["Gemm"] == 1);
  for (const graph::Node& n : net.graph.nodes)
    CHECK(n.kind != graph::OpKind::BatchNorm);
}

TEST_CASE("the groups run in an order where each reads only what ran before it",
          "[graph][partition]") {
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    graph::Network net = load(m);
    std::set<int> ready(net.graph.inputs.begin(), net.graph.inputs.end());
    for (std::size_t g = 0; g < net.groups.size(); ++g) {
      const graph::GroupKernel& k = net.kernels[g];
      for (std::size_t a = 0; a + 1 < k.arguments.size(); ++a) {
        const int t = k.arguments[a];
        INFO(m << " group " << g << " reads " << net.graph.tensor(t).name);
        CHECK((net.graph.tensor(t).is_constant() || ready.count(net.graph.view_base(t))));
      }
      ready.insert(net.groups[g].output);
    }
    for (int o : net.graph.outputs)
      CHECK(ready.count(net.graph.view_base(o)));
  }
}

TEST_CASE("an attention layer's identical projections are one task of weight 2, gelu fused "
          "into its dense layer",
          "[graph][partition]") {
  graph::Network net = load("tiny_bert");
  std::map<std::string, int> w = weight_by_ops(net);
  // Q and V are the same computation on different weights; K is transposed
  // the other way.
  int projections = 0, weight_two = 0;
  for (const graph::Task& t : net.tasks)
    if (t.ops == "MatMul+Add+Reshape+Transpose") {
      ++projections;
      weight_two += t.weight() == 2;
    }
  CHECK(projections == 2);
  CHECK(weight_two == 1);
  CHECK(w["MatMul+Add+Div+Erf+Add+Mul+Mul"] == 1);
  CHECK(w["LayerNormalization"] == 2);
  CHECK(w["MatMul+Add+Add"] == 2); // projections with the residual add
  CHECK(w["Softmax"] == 1);
  // A task of weight 2 has one key for two groups.
  for (const graph::Task& t : net.tasks)
    for (int g : t.groups)
      CHECK(net.kernels[static_cast<std::size_t>(g)].dag.workload_key() == t.key);
}

TEST_CASE("a mobilenet's depthwise convs are tasks of their own kind", "[graph][partition]") {
  graph::Network net = load("tiny_mobilenet");
  int depthwise = 0;
  for (const graph::Task& t : net.tasks)
    depthwise += t.key.rfind("depthwise_conv2d_bn_clip-", 0) == 0 ? t.weight() : 0;
  CHECK(depthwise == 3);
  std::map<std::string, int> w = weight_by_ops(net);
  CHECK(w["Conv+BatchNormalization+Add"] == 1); // the block with a residual
}

TEST_CASE("a 1x1 conv and what it alone feeds run on the map's positions as one axis",
          "[graph][partition]") {
  graph::Network net = load("tiny_mobilenet");
  int flat = 0, square = 0;
  for (std::size_t g = 0; g < net.groups.size(); ++g) {
    const graph::Group& group = net.groups[g];
    const graph::Node& anchor = net.graph.nodes[static_cast<std::size_t>(group.anchor)];
    if (anchor.kind != graph::OpKind::Conv)
      continue;
    const auto& w = net.graph.tensor(anchor.inputs[1]).shape;
    const auto& x = net.graph.tensor(net.graph.view_base(anchor.inputs[0])).shape;
    const ir::ComputeDAG& dag = net.kernels[g].dag;
    const std::vector<std::int64_t> out = dag.stage(dag.arguments().back()).shape();
    INFO("group " << g << " " << net.tasks[static_cast<std::size_t>(net.task_of_group[g])].ops);
    REQUIRE(out.size() == 4);
    if (anchor.attrs.group == 1 && w[2] == 1 && w[3] == 1 && anchor.attrs.strides[0] == 1) {
      // Bias, clip and a residual add too: the whole group is flat, and the
      // graph reads its result in the model's shape through a view.
      CHECK(out[2] == 1);
      CHECK(out[3] == x[2] * x[3]);
      CHECK(net.graph.tensor(group.output).shape == out);
      const std::vector<int> readers = net.graph.consumers(group.output);
      REQUIRE(readers.size() == 1);
      CHECK(net.graph.nodes[static_cast<std::size_t>(readers.front())].kind ==
            graph::OpKind::Reshape);
      ++flat;
    } else {
      CHECK(out[2] > 1); // a 3x3 or depthwise conv keeps its rows
      ++square;
    }
  }
  CHECK(flat >= 4);
  CHECK(square >= 4);
  std::map<std::string, int> w = weight_by_ops(net);
  CHECK(w["Conv+BatchNormalization+Add"] == 1); // the residual add still fused
}
