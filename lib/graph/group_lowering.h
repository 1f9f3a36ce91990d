// Lowering one fused group to a compute DAG: the shared machinery (reads of
// inputs, constants and reshaped views; stage names) in lower_group.cpp, the
// expressions of each op kind in lower_nodes.cpp.
#ifndef KILN_GRAPH_GROUP_LOWERING_H
#define KILN_GRAPH_GROUP_LOWERING_H

#include "kiln/graph/network.h"
#include "kiln/ir/builder.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kiln::graph {

class GroupLowering {
public:
  GroupLowering(const Graph& graph, const Group& group);
  GroupKernel run() &&;

private:
  using Index = std::vector<ir::Expr>;

  // lower_nodes.cpp: the tensor each node computes, as stages.
  ir::Tensor lower(const Node& node);
  ir::Tensor lower_conv(const Node& node);
  ir::Tensor lower_gemm(const Node& node);
  ir::Tensor lower_matmul(const Node& node);
  ir::Tensor lower_elementwise(const Node& node);
  ir::Tensor lower_reduce_mean(const Node& node);
  ir::Tensor lower_softmax(const Node& node);
  ir::Tensor lower_layer_norm(const Node& node);
  ir::Tensor lower_pool(const Node& node);
  ir::Tensor lower_global_average_pool(const Node& node);
  ir::Tensor lower_transpose(const Node& node);
  ir::Tensor lower_concat(const Node& node);
  /// A zero-padded (or -inf-padded) copy of an NCHW input, or the input
  /// itself when there is no padding.
  ir::Tensor padded(int tensor, const NodeAttributes& a, double fill);

  // lower_group.cpp
  /// Element `index` of graph tensor `tensor` as this group sees it: a stage
  /// of the group, a reshape of one (indexed through), or a placeholder.
  ir::Expr read(int tensor, const Index& index);
  /// Reads `tensor` broadcast to the `out_rank` axes of `index` (numpy rules).
  ir::Expr read_broadcast(int tensor, const Index& index);
  /// The placeholder of an input of the group; constants are `const input`s
  /// named after their role (`role`), activations `data`, `data1`, ...
  ir::Tensor placeholder(int tensor, const std::string& role, std::vector<std::int64_t> shape = {});
  std::string fresh(const std::string& base);
  static Index axes_of(const std::vector<ir::Expr>& v) { return v; }
  std::vector<ir::IterVar> axes(const std::vector<std::int64_t>& shape,
                                const std::string& prefix = "i");
  std::string op_name() const;

  const Graph& graph_;
  const Group& group_;
  ir::DAGBuilder builder_;
  std::map<int, ir::Tensor> computed_;     ///< graph tensor -> its stage
  std::map<int, ir::Tensor> placeholders_; ///< graph tensor -> its placeholder
  std::vector<int> arguments_;             ///< graph tensors in placeholder order
  std::set<int> members_;                  ///< the group's nodes
  std::map<std::string, int> names_;
};

/// The index into a tensor of shape `from` that holds the same element as
/// `index` into its reshape of shape `to` (row-major): the axes are matched
/// in runs of equal size, so splitting or merging axes needs no division
/// beyond the merged runs.
std::vector<ir::Expr> reshape_index(const std::vector<std::int64_t>& to,
                                    const std::vector<std::int64_t>& from,
                                    const std::vector<ir::Expr>& index);

} // namespace kiln::graph

#endif // KILN_GRAPH_GROUP_LOWERING_H
