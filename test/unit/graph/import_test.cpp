// ONNX import against numpy: each model of the op suite and each tiny
// network, imported, partitioned, lowered and run by the reference
// interpreter, gives the outputs scripts/make-model's numpy reference wrote.
#include "model_files.h"

#include "kiln/graph/network.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace kiln;

namespace {

/// Runs `dir/stem.onnx` on its io files; returns the worst error relative
/// to 1 + |expected| over all outputs.
double worst_error(const std::string& model, const std::string& io_prefix) {
  auto net = graph::load_network(model);
  INFO(model << ": " << (net.ok() ? "" : net.error().message()));
  REQUIRE(net.ok());
  std::vector<std::vector<double>> inputs;
  for (std::size_t i = 0; i < net->graph.inputs.size(); ++i) {
    inputs.push_back(test::read_f32(io_prefix + ".in" + std::to_string(i) + ".f32"));
    REQUIRE(static_cast<std::int64_t>(inputs.back().size()) ==
            net->graph.tensor(net->graph.inputs[i]).num_elements());
  }
  std::vector<std::vector<double>> outputs = graph::interpret_network(*net, inputs);
  REQUIRE(outputs.size() == net->graph.outputs.size());
  double worst = 0;
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    std::vector<double> want = test::read_f32(io_prefix + ".out" + std::to_string(o) + ".f32");
    REQUIRE(want.size() == outputs[o].size());
    for (std::size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::fabs(outputs[o][i] - want[i]) / (1.0 + std::fabs(want[i])));
  }
  return worst;
}

} // namespace

TEST_CASE("every op of the suite imports and computes what numpy computes", "[graph][import]") {
  const std::vector<std::string> cases = test::op_cases();
  REQUIRE(cases.size() >= 40);
  for (const std::string& c : cases) {
    INFO("case " << c);
    CHECK(worst_error(test::test_model("ops/" + c + ".onnx"), test::test_model("ops/" + c)) < 1e-5);
  }
}

TEST_CASE("the tiny networks import and compute what numpy computes", "[graph][import]") {
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    INFO("model " << m);
    CHECK(worst_error(test::test_model(std::string(m) + ".onnx"),
                      test::test_model(std::string("io/") + m)) < 1e-5);
  }
}

TEST_CASE("each task's op text parses back to the same task", "[graph][import]") {
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    auto net = graph::load_network(test::test_model(std::string(m) + ".onnx"));
    REQUIRE(net.ok());
    for (const graph::Task& task : net->tasks) {
      INFO(m << ": " << task.key);
      auto parsed = ir::parse_op(ir::to_string(task.dag), task.key + ".kop");
      REQUIRE(parsed.ok());
      CHECK(parsed->workload_key() == task.key);
    }
  }
}
