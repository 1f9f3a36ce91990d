// The ONNX importer's state, shared by the model-level reading
// (onnx_import.cpp) and the conversion of each node (onnx_nodes.cpp).
#ifndef KILN_GRAPH_ONNX_IMPORTER_H
#define KILN_GRAPH_ONNX_IMPORTER_H

#include "kiln/graph/graph.h"
#include "kiln/support/error.h"

#include <map>
#include <onnx/onnx_pb.h>
#include <set>
#include <string>
#include <vector>

namespace kiln::graph {

/// The most elements a tensor of a model may have (16 TiB of f32): far
/// beyond any model kiln can run, and small enough that no arithmetic on
/// shapes and window sizes within it overflows 64 bits.
inline constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 42;
/// The largest kernel size, stride, dilation or pad of a window.
inline constexpr std::int64_t kMaxWindowValue = std::int64_t{1} << 20;

/// The element count of `shape`, or -1 when a dimension is not positive
/// or the count passes kMaxTensorElements (no overflow on the way).
std::int64_t checked_elements(const std::vector<std::int64_t>& shape);

class Importer {
public:
  Importer(std::string source, std::int64_t opset) : source_(std::move(source)), opset_(opset) {}

  Graph& graph() { return graph_; }
  std::int64_t opset() const { return opset_; }

  /// A model-level problem (not tied to a node).
  [[noreturn]] void fail_model(const std::string& id, const std::string& message) const;

  /// Registers an initializer or a Constant node's value under `name`.
  void add_constant_tensor(const onnx::TensorProto& t, const std::string& name);
  void add_graph_input(const onnx::ValueInfoProto& input);
  void convert_node(const onnx::NodeProto& node, int index);
  /// The tensor a graph output names.
  int output_tensor(const std::string& name) const;

private:
  // onnx_nodes.cpp: one function a group of op types.
  void convert_conv(const onnx::NodeProto& node);
  void convert_batch_norm(const onnx::NodeProto& node);
  void convert_gemm(const onnx::NodeProto& node);
  void convert_matmul(const onnx::NodeProto& node);
  void convert_binary(const onnx::NodeProto& node, OpKind kind);
  void convert_unary(const onnx::NodeProto& node, OpKind kind);
  void convert_clip(const onnx::NodeProto& node);
  void convert_pow(const onnx::NodeProto& node);
  void convert_reduce_mean(const onnx::NodeProto& node);
  void convert_softmax(const onnx::NodeProto& node);
  void convert_layer_norm(const onnx::NodeProto& node);
  void convert_pool(const onnx::NodeProto& node, OpKind kind);
  void convert_global_average_pool(const onnx::NodeProto& node);
  void convert_reshape(const onnx::NodeProto& node, bool flatten);
  void convert_transpose(const onnx::NodeProto& node);
  void convert_concat(const onnx::NodeProto& node);
  void convert_constant(const onnx::NodeProto& node);
  void convert_identity(const onnx::NodeProto& node);

  // Helpers for the node being converted.
  [[noreturn]] void fail(const std::string& id, const std::string& message) const;
  void allow_attributes(const onnx::NodeProto& node, std::set<std::string> names) const;
  void expect_inputs(const onnx::NodeProto& node, std::size_t min, std::size_t max) const;
  /// Only the first output may be read (BatchNormalization's, MaxPool's,
  /// LayerNormalization's statistics are training outputs).
  void expect_one_output(const onnx::NodeProto& node) const;
  const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name) const;
  std::int64_t int_attr(const onnx::NodeProto& node, const std::string& name,
                        std::int64_t fallback) const;
  float float_attr(const onnx::NodeProto& node, const std::string& name, float fallback) const;
  std::string string_attr(const onnx::NodeProto& node, const std::string& name,
                          const std::string& fallback) const;
  std::vector<std::int64_t> ints_attr(const onnx::NodeProto& node, const std::string& name) const;
  /// The tensor an input names; `what` describes it in messages.
  int input(const onnx::NodeProto& node, int i) const;
  bool has_input(const onnx::NodeProto& node, int i) const;
  /// A constant f32 input (a weight), or an error saying it must be one.
  int constant_input(const onnx::NodeProto& node, int i, const std::string& what) const;
  /// An int64 constant input (Reshape's shape, ReduceMean's axes).
  std::vector<std::int64_t> int64_input(const onnx::NodeProto& node, int i,
                                        const std::string& what) const;
  std::int64_t normalize_axis(std::int64_t axis, std::size_t rank, const std::string& what) const;
  /// Adds the node with a new output tensor of `shape` named by the node's first output.
  void emit(const onnx::NodeProto& node, OpKind kind, std::vector<int> inputs,
            std::vector<std::int64_t> shape, NodeAttributes attrs = {});
  /// The numpy broadcast of two shapes, or an error.
  std::vector<std::int64_t> broadcast(const std::vector<std::int64_t>& a,
                                      const std::vector<std::int64_t>& b) const;
  /// Spatial attributes of Conv and the pools: fills kernel, strides, pads,
  /// dilations and returns the output's spatial extents.
  std::vector<std::int64_t> window(const onnx::NodeProto& node, NodeAttributes& attrs,
                                   const std::vector<std::int64_t>& in_shape,
                                   std::vector<std::int64_t> kernel) const;
  std::string describe(const onnx::NodeProto& node) const;

  std::string source_;
  std::int64_t opset_;
  Graph graph_;
  std::map<std::string, int> tensors_;
  std::map<std::string, std::vector<std::int64_t>> int64_constants_;
  const onnx::NodeProto* node_ = nullptr; ///< the node being converted
  int node_index_ = 0;
};

} // namespace kiln::graph

#endif // KILN_GRAPH_ONNX_IMPORTER_H
