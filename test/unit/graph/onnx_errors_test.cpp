// A model kiln cannot read gets an error naming the node, its op type and
// what is supported; never a crash.
#include "model_files.h"

#include "kiln/graph/network.h"
#include "kiln/graph/onnx_import.h"

#include <catch2/catch.hpp>

#include <functional>
#include <onnx/onnx_pb.h>

using namespace kiln;

namespace {

void add_input(onnx::GraphProto& g, const std::string& name, std::vector<std::int64_t> dims,
               const std::string& symbolic = "") {
  onnx::ValueInfoProto* v = g.add_input();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  for (std::int64_t d : dims)
    t->mutable_shape()->add_dim()->set_dim_value(d);
  if (!symbolic.empty())
    t->mutable_shape()->add_dim()->set_dim_param(symbolic);
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op,
                          std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(op + "_node");
  for (const std::string& i : inputs)
    n->add_input(i);
  n->add_output(output);
  return n;
}

/// A model x[1, 4] -> (fill) -> y, imported from its bytes.
Error import_error(const std::function<void(onnx::GraphProto&)>& fill, std::int64_t opset = 17) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  onnx::OperatorSetIdProto* o = model.add_opset_import();
  o->set_version(opset);
  onnx::GraphProto* g = model.mutable_graph();
  fill(*g);
  g->add_output()->set_name("y");
  std::string bytes;
  REQUIRE(model.SerializeToString(&bytes));
  auto net = graph::import_onnx(bytes, "bad.onnx");
  REQUIRE_FALSE(net.ok());
  return net.error();
}

} // namespace

TEST_CASE("an unsupported op names the node, its type and the supported ops",
          "[graph][onnx-errors]") {
  Error e = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {1, 4});
    add_node(g, "Tanh", {"x"}, "y");
  });
  CHECK(e.id() == "onnx-unsupported-op");
  CHECK_THAT(e.message(), Catch::Contains("bad.onnx") &&
                              Catch::Contains("node 'Tanh_node' (Tanh)") &&
                              Catch::Contains("the supported ops are Conv,"));
}

TEST_CASE("an unsupported attribute, value or opset is refused, saying what is supported",
          "[graph][onnx-errors]") {
  Error attribute = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {1, 4});
    onnx::AttributeProto* a = add_node(g, "Relu", {"x"}, "y")->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(0.1f);
  });
  CHECK(attribute.id() == "onnx-unsupported");
  CHECK_THAT(attribute.message(), Catch::Contains("attribute 'alpha' is not supported; Relu takes "
                                                  "no attributes"));
  Error opset = import_error(
      [](onnx::GraphProto& g) {
        add_input(g, "x", {1, 4});
        add_node(g, "Relu", {"x"}, "y");
      },
      9);
  CHECK(opset.id() == "onnx-unsupported");
  CHECK_THAT(opset.message(), Catch::Contains("opset is 9; kiln reads opsets 13 to 21"));
  Error ceil = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {1, 1, 4, 4});
    onnx::NodeProto* n = add_node(g, "MaxPool", {"x"}, "y");
    onnx::AttributeProto* k = n->add_attribute();
    k->set_name("kernel_shape");
    k->set_type(onnx::AttributeProto_AttributeType_INTS);
    k->add_ints(2);
    k->add_ints(2);
    onnx::AttributeProto* c = n->add_attribute();
    c->set_name("ceil_mode");
    c->set_type(onnx::AttributeProto_AttributeType_INT);
    c->set_i(1);
  });
  CHECK(ceil.id() == "onnx-unsupported");
  CHECK_THAT(ceil.message(), Catch::Contains("(MaxPool): ceil_mode 1 is not supported"));
  Error weights = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {1, 1, 4, 4});
    add_input(g, "w", {1, 1, 3, 3});
    add_node(g, "Conv", {"x", "w"}, "y");
  });
  CHECK(weights.id() == "onnx-unsupported");
  CHECK_THAT(weights.message(), Catch::Contains("its weight ('w') is computed by the graph"));
}

TEST_CASE("a dynamic input dimension asks for a static one", "[graph][onnx-errors]") {
  Error e = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {}, "batch");
    add_node(g, "Relu", {"x"}, "y");
  });
  CHECK(e.id() == "onnx-dynamic-shape");
  CHECK_THAT(e.message(), Catch::Contains("graph input 'x' has a dimension 'batch'"));
}

TEST_CASE("a damaged model is an error, not a crash", "[graph][onnx-errors]") {
  auto garbage = graph::import_onnx("\x08\x96\x01 not a model", "junk.onnx");
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().id() == "onnx-bad-model");
  Error undefined = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {1, 4});
    add_node(g, "Add", {"x", "nowhere"}, "y");
  });
  CHECK(undefined.id() == "onnx-bad-model");
  CHECK_THAT(undefined.message(), Catch::Contains("input 'nowhere' is defined by no earlier node"));
  Error shapes = import_error([](onnx::GraphProto& g) {
    add_input(g, "x", {1, 4});
    add_input(g, "z", {1, 3});
    add_node(g, "Add", {"x", "z"}, "y");
  });
  CHECK(shapes.id() == "onnx-bad-model");
  CHECK_THAT(shapes.message(), Catch::Contains("shapes [1, 4] and [1, 3] do not broadcast"));
  auto missing = graph::import_onnx_file("/nonexistent/model.onnx");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().id() == "cannot-open-file");
}

TEST_CASE("the network interpreter checks the number of inputs", "[graph][onnx-errors]") {
  auto net = graph::load_network(test::test_model("tiny_resnet.onnx"));
  REQUIRE(net.ok());
  try {
    graph::interpret_network(*net, {});
    FAIL("no error");
  } catch (const UserError& e) {
    CHECK(e.error().id() == "wrong-input-count");
  }
}
