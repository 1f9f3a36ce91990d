// A model's graph as kiln sees it after import: f32 tensors with static
// shapes, constants with their values, and nodes of the supported op kinds
// in topological order. Imported from ONNX (onnx_import.h), partitioned into
// fused tasks (partition.h), each task lowered to a compute DAG (task_dag.h).
#ifndef KILN_GRAPH_GRAPH_H
#define KILN_GRAPH_GRAPH_H

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::graph {

/// A value of the graph. Constants (initializers and what import folds) carry
/// their data; activations are computed by a node or are graph inputs.
struct TensorInfo {
  std::string name;
  std::vector<std::int64_t> shape;
  std::shared_ptr<const std::vector<float>> data; ///< set for constants

  bool is_constant() const { return data != nullptr; }
  std::int64_t num_elements() const;
};

enum class OpKind : std::uint8_t {
  // anchors: each starts a task
  Conv,
  Gemm,
  MatMul,
  MaxPool,
  AveragePool,
  GlobalAveragePool,
  ReduceMean,
  Softmax,
  LayerNorm,
  Concat,
  // elementwise: fused into the task that produces their input
  Add,
  Sub,
  Mul,
  Div,
  Relu,
  Clip,
  Sigmoid,
  Erf,
  Sqrt,
  Pow,
  BatchNorm, ///< one not folded into a conv: a scale and a shift per channel
  // data movement
  Transpose, ///< fused like an elementwise op (its consumer reads permuted)
  Reshape,   ///< Reshape and Flatten: a view of the same contiguous buffer
};

std::string_view op_kind_name(OpKind kind); ///< the ONNX op type, e.g. "Conv"
bool is_anchor(OpKind kind);
bool is_view(OpKind kind); ///< Reshape: no data movement

/// The attributes of every supported kind, normalised at import (defaults
/// filled in, negative axes made positive).
struct NodeAttributes {
  // Conv, MaxPool, AveragePool: per spatial dimension; pads as begins then ends
  std::vector<std::int64_t> kernel_shape, strides, pads, dilations;
  std::int64_t group = 1;
  bool count_include_pad = false;
  // Gemm
  bool trans_a = false, trans_b = false;
  float alpha = 1.0f, beta = 1.0f;
  // Softmax, LayerNorm (first normalised axis), Concat
  std::int64_t axis = -1;
  // ReduceMean
  std::vector<std::int64_t> axes;
  bool keepdims = true;
  // Transpose
  std::vector<std::int64_t> perm;
  // LayerNorm, BatchNorm
  float epsilon = 1e-5f;
  // Clip
  float clip_min = -std::numeric_limits<float>::infinity();
  float clip_max = std::numeric_limits<float>::infinity();
  // Pow
  float exponent = 1.0f;
};

struct Node {
  std::string name; ///< the model's node name, or "<OpType>_<index>" when it has none
  OpKind kind;
  std::vector<int> inputs; ///< tensor ids; constants included (weights, biases)
  int output = -1;         ///< tensor id
  NodeAttributes attrs;
  /// Op types folded into this node at import (a BatchNormalization into its
  /// conv), for the task table.
  std::vector<std::string> folded;
};

class Graph {
public:
  std::string name;
  std::vector<TensorInfo> tensors;
  std::vector<Node> nodes; ///< in topological order
  std::vector<int> inputs, outputs;

  int add_tensor(TensorInfo t);
  int add_constant(std::string name, std::vector<std::int64_t> shape, std::vector<float> data);
  const TensorInfo& tensor(int id) const { return tensors.at(static_cast<std::size_t>(id)); }
  /// Index of the node computing `tensor`, -1 for graph inputs and constants.
  int producer(int tensor) const;
  /// Indices of the nodes reading `tensor`.
  std::vector<int> consumers(int tensor) const;
  bool is_graph_output(int tensor) const;
  /// Follows Reshape views back to the tensor that owns the buffer.
  int view_base(int tensor) const;
  /// Total of the constants' elements: the model's parameters.
  std::int64_t parameter_count() const;
};

} // namespace kiln::graph

#endif // KILN_GRAPH_GRAPH_H
