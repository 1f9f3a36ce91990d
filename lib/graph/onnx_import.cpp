#include "kiln/graph/onnx_import.h"

#include "fold.h"
#include "onnx_importer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace kiln::graph {

// Softmax's meaning changed at opset 13 (before, it flattened to 2-D);
// LayerNormalization arrived at 17 and is accepted from any opset a model
// declares for it.
static constexpr std::int64_t min_opset = 13;
static constexpr std::int64_t max_opset = 21;

std::string_view supported_onnx_ops() {
  return "Conv, BatchNormalization, Gemm, MatMul, Add, Sub, Mul, Div, Relu, Clip, Sigmoid, Erf, "
         "Sqrt, Pow, ReduceMean, LayerNormalization, Softmax, MaxPool, AveragePool, "
         "GlobalAveragePool, Flatten, Reshape, Transpose, Concat, Constant, Identity, Dropout";
}

void Importer::fail_model(const std::string& id, const std::string& message) const {
  throw UserError(Error(id, fmt::format("{}: {}", source_, message)));
}

static std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void Importer::add_constant_tensor(const onnx::TensorProto& t, const std::string& name) {
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
    fail_model("onnx-unsupported",
               fmt::format("tensor '{}' keeps its data in an external file; save the model with "
                           "its weights inside (onnx.save(model, path, "
                           "save_as_external_data=False))",
                           name));
  std::vector<std::int64_t> shape(t.dims().begin(), t.dims().end());
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 0 || (d > 0 && n > (std::int64_t{1} << 40) / d))
      fail_model("onnx-bad-model", fmt::format("tensor '{}' has shape {}, which is negative or "
                                               "too large",
                                               name, shape_text(shape)));
    n *= d;
  }
  const std::string& raw = t.raw_data();
  auto count_error = [&](std::size_t got) {
    fail_model("onnx-bad-model", fmt::format("tensor '{}' of shape {} holds {} values, not {}",
                                             name, shape_text(shape), got, n));
  };
  switch (t.data_type()) {
  case onnx::TensorProto_DataType_FLOAT: {
    // The count is checked before anything is allocated: the shape alone
    // may claim far more than the file holds.
    if (!raw.empty() ? raw.size() != static_cast<std::size_t>(n) * sizeof(float)
                     : static_cast<std::int64_t>(t.float_data_size()) != n)
      count_error(!raw.empty() ? raw.size() / sizeof(float)
                               : static_cast<std::size_t>(t.float_data_size()));
    std::vector<float> data(static_cast<std::size_t>(n));
    if (!raw.empty())
      std::memcpy(data.data(), raw.data(), raw.size());
    else
      std::copy(t.float_data().begin(), t.float_data().end(), data.begin());
    tensors_[name] = graph_.add_constant(name, std::move(shape), std::move(data));
    return;
  }
  case onnx::TensorProto_DataType_INT64: {
    if (!raw.empty() ? raw.size() != static_cast<std::size_t>(n) * sizeof(std::int64_t)
                     : static_cast<std::int64_t>(t.int64_data_size()) != n)
      count_error(!raw.empty() ? raw.size() / sizeof(std::int64_t)
                               : static_cast<std::size_t>(t.int64_data_size()));
    std::vector<std::int64_t> data(static_cast<std::size_t>(n));
    if (!raw.empty())
      std::memcpy(data.data(), raw.data(), raw.size());
    else
      std::copy(t.int64_data().begin(), t.int64_data().end(), data.begin());
    int64_constants_[name] = std::move(data);
    return;
  }
  default:
    fail_model("onnx-unsupported",
               fmt::format("tensor '{}' has element type {} (TensorProto.DataType); kiln reads "
                           "f32 tensors, and int64 ones for shapes and axes",
                           name, static_cast<int>(t.data_type())));
  }
}

void Importer::add_graph_input(const onnx::ValueInfoProto& input) {
  const std::string& name = input.name();
  if (!input.type().has_tensor_type() ||
      input.type().tensor_type().elem_type() != onnx::TensorProto_DataType_FLOAT)
    fail_model("onnx-unsupported",
               fmt::format("graph input '{}' is not an f32 tensor; kiln runs f32 models", name));
  if (!input.type().tensor_type().has_shape())
    fail_model("onnx-dynamic-shape",
               fmt::format("graph input '{}' has no shape; kiln compiles for static shapes: give "
                           "the input its dimensions",
                           name));
  std::vector<std::int64_t> shape;
  for (const onnx::TensorShapeProto_Dimension& d : input.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() <= 0)
      fail_model("onnx-dynamic-shape",
                 fmt::format("graph input '{}' has a dimension{} that is not a positive number; "
                             "kiln compiles for static shapes: fix it in the model (e.g. with "
                             "onnx.tools.update_model_dims)",
                             name, d.has_dim_param() ? fmt::format(" '{}'", d.dim_param()) : ""));
    shape.push_back(d.dim_value());
  }
  if (checked_elements(shape) < 0)
    fail_model("onnx-bad-model", fmt::format("graph input '{}' has shape {}, with more than 2^42 "
                                             "elements",
                                             name, shape_text(shape)));
  int id = graph_.add_tensor(TensorInfo{name, std::move(shape), nullptr});
  tensors_[name] = id;
  graph_.inputs.push_back(id);
}

int Importer::output_tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    fail_model("onnx-bad-model",
               fmt::format("graph output '{}' is computed by no node and is no input", name));
  return it->second;
}

static void read_graph(Importer& importer, const onnx::GraphProto& g) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& t : g.initializer()) {
    importer.add_constant_tensor(t, t.name());
    initializers.insert(t.name());
  }
  for (const onnx::ValueInfoProto& input : g.input())
    if (!initializers.count(input.name()))
      importer.add_graph_input(input);
  for (int i = 0; i < g.node_size(); ++i)
    importer.convert_node(g.node(i), i);
  for (const onnx::ValueInfoProto& output : g.output()) {
    int id = importer.output_tensor(output.name());
    if (importer.graph().tensor(id).is_constant())
      importer.fail_model("onnx-unsupported",
                          fmt::format("graph output '{}' is a constant; kiln compiles models "
                                      "whose outputs depend on their inputs",
                                      output.name()));
    importer.graph().outputs.push_back(id);
  }
  if (importer.graph().outputs.empty())
    importer.fail_model("onnx-bad-model", "the graph has no outputs");
}

Expected<Graph> import_onnx(std::string_view bytes, const std::string& source) {
  return catch_user_error([&]() -> Graph {
    onnx::ModelProto model;
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
        !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      throw UserError(Error("onnx-bad-model",
                            fmt::format("{}: not an ONNX model (the protobuf does not parse); "
                                        "give a .onnx file",
                                        source)));
    std::int64_t opset = -1;
    for (const onnx::OperatorSetIdProto& o : model.opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx")
        opset = o.version();
    if (opset < min_opset || opset > max_opset)
      throw UserError(Error(
          "onnx-unsupported",
          fmt::format("{}: the model's ONNX opset is {}; kiln reads opsets {} to {}: convert it "
                      "(onnx.version_converter.convert_version(model, 17))",
                      source, opset < 0 ? std::string("missing") : std::to_string(opset), min_opset,
                      max_opset)));
    Importer importer(source, opset);
    importer.graph().name = model.graph().name();
    read_graph(importer, model.graph());
    Graph graph = std::move(importer.graph());
    fold_batch_norms(graph);
    return graph;
  });
}

Expected<Graph> import_onnx_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Error("cannot-open-file",
                 fmt::format("cannot open model file '{}'; check the path", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad())
    return Error("cannot-open-file", fmt::format("cannot read model file '{}'", path));
  return import_onnx(bytes.str(), path);
}

} // namespace kiln::graph
