// Converting each supported ONNX node: its attributes checked and
// normalised, its output's shape inferred.
#include "onnx_importer.h"

#include "kiln/graph/onnx_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kiln::graph {

static std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void Importer::convert_node(const onnx::NodeProto& node, int index) {
  node_ = &node;
  node_index_ = index;
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    fail("onnx-unsupported", fmt::format("the op domain '{}' is not supported; kiln reads the "
                                         "default ONNX domain's ops: {}",
                                         node.domain(), supported_onnx_ops()));
  const std::string& op = node.op_type();
  if (op == "Conv")
    convert_conv(node);
  else if (op == "BatchNormalization")
    convert_batch_norm(node);
  else if (op == "Gemm")
    convert_gemm(node);
  else if (op == "MatMul")
    convert_matmul(node);
  else if (op == "Add")
    convert_binary(node, OpKind::Add);
  else if (op == "Sub")
    convert_binary(node, OpKind::Sub);
  else if (op == "Mul")
    convert_binary(node, OpKind::Mul);
  else if (op == "Div")
    convert_binary(node, OpKind::Div);
  else if (op == "Relu")
    convert_unary(node, OpKind::Relu);
  else if (op == "Sigmoid")
    convert_unary(node, OpKind::Sigmoid);
  else if (op == "Erf")
    convert_unary(node, OpKind::Erf);
  else if (op == "Sqrt")
    convert_unary(node, OpKind::Sqrt);
  else if (op == "Clip")
    convert_clip(node);
  else if (op == "Pow")
    convert_pow(node);
  else if (op == "ReduceMean")
    convert_reduce_mean(node);
  else if (op == "Softmax")
    convert_softmax(node);
  else if (op == "LayerNormalization")
    convert_layer_norm(node);
  else if (op == "MaxPool")
    convert_pool(node, OpKind::MaxPool);
  else if (op == "AveragePool")
    convert_pool(node, OpKind::AveragePool);
  else if (op == "GlobalAveragePool")
    convert_global_average_pool(node);
  else if (op == "Flatten")
    convert_reshape(node, true);
  else if (op == "Reshape")
    convert_reshape(node, false);
  else if (op == "Transpose")
    convert_transpose(node);
  else if (op == "Concat")
    convert_concat(node);
  else if (op == "Constant")
    convert_constant(node);
  else if (op == "Identity" || op == "Dropout")
    convert_identity(node);
  else
    fail("onnx-unsupported-op",
         fmt::format("op type '{}' is not supported; the supported ops are {}", op,
                     supported_onnx_ops()));
  node_ = nullptr;
}

std::vector<std::int64_t> Importer::window(const onnx::NodeProto& node, NodeAttributes& attrs,
                                           const std::vector<std::int64_t>& in_shape,
                                           std::vector<std::int64_t> kernel) const {
  const std::size_t spatial = in_shape.size() - 2;
  std::vector<std::int64_t> given = ints_attr(node, "kernel_shape");
  if (!given.empty() && given != kernel && !kernel.empty())
    fail("onnx-bad-model", fmt::format("kernel_shape {} differs from the weights' {}",
                                       shape_text(given), shape_text(kernel)));
  if (kernel.empty())
    kernel = given;
  if (kernel.size() != spatial)
    fail("onnx-bad-model", fmt::format("kernel_shape has {} values for {} spatial dimensions",
                                       kernel.size(), spatial));
  for (std::int64_t k : kernel)
    if (k < 1 || k > kMaxWindowValue)
      fail("onnx-bad-model",
           fmt::format("kernel_shape {} has a value out of range (1 to 2^20)", shape_text(kernel)));
  auto per_dim = [&](const std::string& name, std::size_t count) {
    std::vector<std::int64_t> v = ints_attr(node, name);
    if (v.empty())
      v.assign(count, name == "pads" ? 0 : 1);
    if (v.size() != count)
      fail("onnx-bad-model", fmt::format("{} has {} values; it needs {}", name, v.size(), count));
    for (std::int64_t x : v)
      if (x < 0 || (x == 0 && name != "pads") || x > kMaxWindowValue)
        fail("onnx-bad-model", fmt::format("{} {} has a value out of range ({} to 2^20)", name,
                                           shape_text(v), name == "pads" ? 0 : 1));
    return v;
  };
  attrs.kernel_shape = kernel;
  attrs.strides = per_dim("strides", spatial);
  attrs.dilations = per_dim("dilations", spatial);
  attrs.pads = per_dim("pads", 2 * spatial);
  const std::string auto_pad = string_attr(node, "auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t d = 0; d < spatial; ++d) {
      std::int64_t in = in_shape[2 + d];
      std::int64_t out = (in + attrs.strides[d] - 1) / attrs.strides[d];
      std::int64_t extent = (kernel[d] - 1) * attrs.dilations[d] + 1;
      std::int64_t total = std::max<std::int64_t>((out - 1) * attrs.strides[d] + extent - in, 0);
      std::int64_t small = total / 2;
      attrs.pads[d] = auto_pad == "SAME_UPPER" ? small : total - small;
      attrs.pads[spatial + d] = total - attrs.pads[d];
    }
  } else if (auto_pad == "VALID") {
    std::fill(attrs.pads.begin(), attrs.pads.end(), 0);
  } else if (auto_pad != "NOTSET") {
    fail("onnx-unsupported",
         fmt::format("auto_pad '{}' is not supported; use NOTSET, VALID, SAME_UPPER or SAME_LOWER",
                     auto_pad));
  }
  if (int_attr(node, "ceil_mode", 0) != 0)
    fail("onnx-unsupported", "ceil_mode 1 is not supported; export the model with ceil_mode 0 "
                             "and the pads that give the same output size");
  std::vector<std::int64_t> out;
  for (std::size_t d = 0; d < spatial; ++d) {
    std::int64_t padded = in_shape[2 + d] + attrs.pads[d] + attrs.pads[spatial + d];
    std::int64_t extent = (kernel[d] - 1) * attrs.dilations[d] + 1;
    if (extent > padded)
      fail("onnx-bad-model", fmt::format("the window ({}) is larger than the padded input ({}) "
                                         "in spatial dimension {}",
                                         extent, padded, d));
    out.push_back((padded - extent) / attrs.strides[d] + 1);
  }
  return out;
}

void Importer::convert_conv(const onnx::NodeProto& node) {
  allow_attributes(node, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  expect_inputs(node, 2, 3);
  int x = input(node, 0);
  int w = constant_input(node, 1, "weight");
  const auto& xs = graph_.tensor(x).shape;
  const auto& ws = graph_.tensor(w).shape;
  if (xs.size() != 4)
    fail("onnx-unsupported",
         fmt::format("input of shape {}: kiln supports 2-D convolutions (N, C, H, W inputs)",
                     shape_text(xs)));
  if (ws.size() != 4)
    fail("onnx-bad-model", fmt::format("weight of shape {} is not 4-D", shape_text(ws)));
  NodeAttributes attrs;
  attrs.group = int_attr(node, "group", 1);
  const std::int64_t g = attrs.group;
  if (g < 1 || xs[1] % g != 0 || ws[0] % g != 0 || ws[1] * g != xs[1])
    fail("onnx-bad-model", fmt::format("group {} does not fit input channels {} and weight {}", g,
                                       xs[1], shape_text(ws)));
  std::vector<std::int64_t> out = window(node, attrs, xs, {ws[2], ws[3]});
  std::vector<int> inputs{x, w};
  if (has_input(node, 2)) {
    int b = constant_input(node, 2, "bias");
    if (graph_.tensor(b).shape != std::vector<std::int64_t>{ws[0]})
      fail("onnx-bad-model", fmt::format("bias of shape {} should be [{}]",
                                         shape_text(graph_.tensor(b).shape), ws[0]));
    inputs.push_back(b);
  }
  emit(node, OpKind::Conv, inputs, {xs[0], ws[0], out[0], out[1]}, attrs);
}

void Importer::convert_batch_norm(const onnx::NodeProto& node) {
  allow_attributes(node, {"epsilon", "momentum", "training_mode", "spatial"});
  expect_inputs(node, 5, 5);
  expect_one_output(node); // its name names the folded constants
  if (int_attr(node, "training_mode", 0) != 0)
    fail("onnx-unsupported", "training_mode 1 is not supported; kiln runs inference");
  if (int_attr(node, "spatial", 1) != 1)
    fail("onnx-unsupported", "spatial 0 is not supported");
  int x = input(node, 0);
  const std::vector<std::int64_t> xs = graph_.tensor(x).shape; // add_constant moves tensors
  if (xs.size() < 2)
    fail("onnx-bad-model", fmt::format("input of shape {} has no channel axis", shape_text(xs)));
  const std::int64_t c = xs[1];
  const char* names[] = {"scale", "bias", "mean", "var"};
  std::vector<const std::vector<float>*> params;
  for (int i = 1; i <= 4; ++i) {
    int id = constant_input(node, i, names[i - 1]);
    if (graph_.tensor(id).shape != std::vector<std::int64_t>{c})
      fail("onnx-bad-model", fmt::format("{} of shape {} should be [{}]", names[i - 1],
                                         shape_text(graph_.tensor(id).shape), c));
    params.push_back(graph_.tensor(id).data.get());
  }
  const float eps = float_attr(node, "epsilon", 1e-5f);
  // y = x * scale' + shift', with scale' = scale / sqrt(var + eps) and
  // shift' = bias - mean * scale', computed in double.
  std::vector<float> scale(static_cast<std::size_t>(c)), shift(static_cast<std::size_t>(c));
  for (std::size_t i = 0; i < scale.size(); ++i) {
    double s = (*params[0])[i] / std::sqrt(static_cast<double>((*params[3])[i]) + eps);
    scale[i] = static_cast<float>(s);
    shift[i] = static_cast<float>((*params[1])[i] - (*params[2])[i] * s);
  }
  int s = graph_.add_constant(node.output(0) + ".scale", {c}, std::move(scale));
  int b = graph_.add_constant(node.output(0) + ".shift", {c}, std::move(shift));
  NodeAttributes attrs;
  attrs.epsilon = eps;
  emit(node, OpKind::BatchNorm, {x, s, b}, xs, attrs);
}

void Importer::convert_gemm(const onnx::NodeProto& node) {
  allow_attributes(node, {"alpha", "beta", "transA", "transB"});
  expect_inputs(node, 2, 3);
  int a = input(node, 0), b = input(node, 1);
  const auto& as = graph_.tensor(a).shape;
  const auto& bs = graph_.tensor(b).shape;
  if (as.size() != 2 || bs.size() != 2)
    fail("onnx-bad-model", fmt::format("inputs of shapes {} and {} are not matrices",
                                       shape_text(as), shape_text(bs)));
  NodeAttributes attrs;
  attrs.trans_a = int_attr(node, "transA", 0) != 0;
  attrs.trans_b = int_attr(node, "transB", 0) != 0;
  attrs.alpha = float_attr(node, "alpha", 1.0f);
  attrs.beta = float_attr(node, "beta", 1.0f);
  std::int64_t m = attrs.trans_a ? as[1] : as[0], k = attrs.trans_a ? as[0] : as[1];
  std::int64_t kb = attrs.trans_b ? bs[1] : bs[0], n = attrs.trans_b ? bs[0] : bs[1];
  if (k != kb)
    fail("onnx-bad-model",
         fmt::format("A {} and B {} do not multiply (transA {}, transB {})", shape_text(as),
                     shape_text(bs), attrs.trans_a, attrs.trans_b));
  std::vector<int> inputs{a, b};
  if (has_input(node, 2)) {
    int c = input(node, 2);
    std::vector<std::int64_t> out{m, n};
    if (broadcast(graph_.tensor(c).shape, out) != out)
      fail("onnx-bad-model", fmt::format("C of shape {} does not broadcast to the output {}",
                                         shape_text(graph_.tensor(c).shape), shape_text(out)));
    inputs.push_back(c);
  }
  emit(node, OpKind::Gemm, inputs, {m, n}, attrs);
}

void Importer::convert_matmul(const onnx::NodeProto& node) {
  allow_attributes(node, {});
  expect_inputs(node, 2, 2);
  int a = input(node, 0), b = input(node, 1);
  const auto& as = graph_.tensor(a).shape;
  const auto& bs = graph_.tensor(b).shape;
  if (as.size() < 2 || bs.size() < 2)
    fail("onnx-unsupported", fmt::format("inputs of shapes {} and {}: kiln supports MatMul of "
                                         "tensors with at least 2 dimensions",
                                         shape_text(as), shape_text(bs)));
  if (as.back() != bs[bs.size() - 2])
    fail("onnx-bad-model",
         fmt::format("shapes {} and {} do not multiply", shape_text(as), shape_text(bs)));
  std::vector<std::int64_t> out = broadcast(std::vector<std::int64_t>(as.begin(), as.end() - 2),
                                            std::vector<std::int64_t>(bs.begin(), bs.end() - 2));
  out.push_back(as[as.size() - 2]);
  out.push_back(bs.back());
  emit(node, OpKind::MatMul, {a, b}, out);
}

void Importer::convert_binary(const onnx::NodeProto& node, OpKind kind) {
  allow_attributes(node, {});
  expect_inputs(node, 2, 2);
  int a = input(node, 0), b = input(node, 1);
  emit(node, kind, {a, b}, broadcast(graph_.tensor(a).shape, graph_.tensor(b).shape));
}

void Importer::convert_unary(const onnx::NodeProto& node, OpKind kind) {
  allow_attributes(node, {});
  expect_inputs(node, 1, 1);
  int x = input(node, 0);
  emit(node, kind, {x}, graph_.tensor(x).shape);
}

static float scalar_value(const TensorInfo& t) {
  return t.data->front();
}

void Importer::convert_clip(const onnx::NodeProto& node) {
  allow_attributes(node, {});
  expect_inputs(node, 1, 3);
  int x = input(node, 0);
  NodeAttributes attrs;
  for (int i = 1; i <= 2; ++i) {
    if (!has_input(node, i))
      continue;
    const TensorInfo& t = graph_.tensor(constant_input(node, i, i == 1 ? "min" : "max"));
    if (t.num_elements() != 1)
      fail("onnx-bad-model", fmt::format("{} must be a scalar", i == 1 ? "min" : "max"));
    (i == 1 ? attrs.clip_min : attrs.clip_max) = scalar_value(t);
  }
  emit(node, OpKind::Clip, {x}, graph_.tensor(x).shape, attrs);
}

void Importer::convert_pow(const onnx::NodeProto& node) {
  allow_attributes(node, {});
  expect_inputs(node, 2, 2);
  int x = input(node, 0);
  const TensorInfo& y = graph_.tensor(constant_input(node, 1, "exponent"));
  if (y.num_elements() != 1)
    fail("onnx-unsupported", "the exponent must be one constant value");
  NodeAttributes attrs;
  attrs.exponent = scalar_value(y);
  const float e = attrs.exponent;
  bool small_integer = e == std::round(e) && std::fabs(e) <= 4;
  if (!small_integer && e != 0.5f && e != -0.5f)
    fail("onnx-unsupported", fmt::format("exponent {} is not supported; kiln supports the "
                                         "integers -4 to 4, 0.5 and -0.5",
                                         e));
  emit(node, OpKind::Pow, {x}, broadcast(graph_.tensor(x).shape, y.shape), attrs);
}

void Importer::convert_reduce_mean(const onnx::NodeProto& node) {
  allow_attributes(node, {"axes", "keepdims", "noop_with_empty_axes"});
  expect_inputs(node, 1, 2);
  int x = input(node, 0);
  const auto& xs = graph_.tensor(x).shape;
  NodeAttributes attrs;
  std::vector<std::int64_t> axes =
      has_input(node, 1) ? int64_input(node, 1, "axes") : ints_attr(node, "axes");
  if (axes.empty()) {
    if (int_attr(node, "noop_with_empty_axes", 0) != 0)
      fail("onnx-unsupported", "noop_with_empty_axes with no axes is not supported");
    axes.resize(xs.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (std::int64_t& a : axes)
    a = normalize_axis(a, xs.size(), "axis");
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    fail("onnx-bad-model", "axes repeat an axis");
  attrs.axes = axes;
  attrs.keepdims = int_attr(node, "keepdims", 1) != 0;
  std::vector<std::int64_t> out;
  for (std::size_t d = 0; d < xs.size(); ++d) {
    bool reduced = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d));
    if (!reduced)
      out.push_back(xs[d]);
    else if (attrs.keepdims)
      out.push_back(1);
  }
  if (out.empty())
    out.push_back(1); // a scalar is kept as one element
  emit(node, OpKind::ReduceMean, {x}, out, attrs);
}

void Importer::convert_softmax(const onnx::NodeProto& node) {
  allow_attributes(node, {"axis"});
  expect_inputs(node, 1, 1);
  int x = input(node, 0);
  NodeAttributes attrs;
  attrs.axis = normalize_axis(int_attr(node, "axis", -1), graph_.tensor(x).shape.size(), "axis");
  emit(node, OpKind::Softmax, {x}, graph_.tensor(x).shape, attrs);
}

void Importer::convert_layer_norm(const onnx::NodeProto& node) {
  allow_attributes(node, {"axis", "epsilon", "stash_type"});
  expect_inputs(node, 2, 3);
  int x = input(node, 0);
  const auto& xs = graph_.tensor(x).shape;
  NodeAttributes attrs;
  attrs.axis = normalize_axis(int_attr(node, "axis", -1), xs.size(), "axis");
  attrs.epsilon = float_attr(node, "epsilon", 1e-5f);
  const std::vector<std::int64_t> normalized(xs.begin() + attrs.axis, xs.end());
  std::vector<int> inputs{x};
  for (int i = 1; i <= 2; ++i) {
    if (!has_input(node, i))
      continue;
    int id = constant_input(node, i, i == 1 ? "scale" : "bias");
    if (graph_.tensor(id).shape != normalized)
      fail("onnx-unsupported",
           fmt::format("{} of shape {}: kiln supports a scale and bias of the normalised shape {}",
                       i == 1 ? "scale" : "bias", shape_text(graph_.tensor(id).shape),
                       shape_text(normalized)));
    inputs.push_back(id);
  }
  emit(node, OpKind::LayerNorm, inputs, xs, attrs);
}

void Importer::convert_pool(const onnx::NodeProto& node, OpKind kind) {
  if (kind == OpKind::MaxPool)
    allow_attributes(node, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads",
                            "storage_order", "strides"});
  else
    allow_attributes(node, {"auto_pad", "ceil_mode", "count_include_pad", "dilations",
                            "kernel_shape", "pads", "strides"});
  expect_inputs(node, 1, 1);
  if (int_attr(node, "storage_order", 0) != 0)
    fail("onnx-unsupported", "storage_order 1 is not supported");
  int x = input(node, 0);
  const auto& xs = graph_.tensor(x).shape;
  if (xs.size() != 4)
    fail("onnx-unsupported", fmt::format("input of shape {}: kiln supports 2-D pooling (N, C, "
                                         "H, W inputs)",
                                         shape_text(xs)));
  if (ints_attr(node, "kernel_shape").empty())
    fail("onnx-bad-model", "kernel_shape is required");
  NodeAttributes attrs;
  attrs.count_include_pad = int_attr(node, "count_include_pad", 0) != 0;
  std::vector<std::int64_t> out = window(node, attrs, xs, {});
  emit(node, kind, {x}, {xs[0], xs[1], out[0], out[1]}, attrs);
}

void Importer::convert_global_average_pool(const onnx::NodeProto& node) {
  allow_attributes(node, {});
  expect_inputs(node, 1, 1);
  int x = input(node, 0);
  const auto& xs = graph_.tensor(x).shape;
  if (xs.size() < 3)
    fail("onnx-bad-model", fmt::format("input of shape {} has no spatial axes", shape_text(xs)));
  std::vector<std::int64_t> out(xs.begin(), xs.begin() + 2);
  out.resize(xs.size(), 1);
  emit(node, OpKind::GlobalAveragePool, {x}, out);
}

void Importer::convert_reshape(const onnx::NodeProto& node, bool flatten) {
  int x = -1;
  std::vector<std::int64_t> out;
  if (flatten) {
    allow_attributes(node, {"axis"});
    expect_inputs(node, 1, 1);
    x = input(node, 0);
    const auto& xs = graph_.tensor(x).shape;
    std::int64_t axis = int_attr(node, "axis", 1);
    if (axis != static_cast<std::int64_t>(xs.size()))
      axis = normalize_axis(axis, xs.size(), "axis");
    auto first = static_cast<std::ptrdiff_t>(axis);
    out = {std::accumulate(xs.begin(), xs.begin() + first, std::int64_t{1}, std::multiplies<>()),
           std::accumulate(xs.begin() + first, xs.end(), std::int64_t{1}, std::multiplies<>())};
  } else {
    allow_attributes(node, {"allowzero"});
    expect_inputs(node, 2, 2);
    x = input(node, 0);
    const auto& xs = graph_.tensor(x).shape;
    out = int64_input(node, 1, "shape");
    const bool allow_zero = int_attr(node, "allowzero", 0) != 0;
    int inferred = -1;
    std::int64_t known = 1;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allow_zero) {
        if (i >= xs.size())
          fail("onnx-bad-model", fmt::format("shape entry {} is 0 (copy) but the input has rank "
                                             "{}",
                                             i, xs.size()));
        out[i] = xs[i];
      }
      if (out[i] == -1) {
        if (inferred >= 0)
          fail("onnx-bad-model", "the shape has more than one -1");
        inferred = static_cast<int>(i);
        continue;
      }
      if (out[i] <= 0)
        fail("onnx-bad-model", fmt::format("shape entry {} is {}", i, out[i]));
      if (known > kMaxTensorElements / out[i])
        fail("onnx-bad-model",
             fmt::format("cannot reshape {} to {}", shape_text(xs), shape_text(out)));
      known *= out[i];
    }
    const std::int64_t total = graph_.tensor(x).num_elements();
    if (inferred >= 0) {
      if (total % known != 0)
        fail("onnx-bad-model",
             fmt::format("cannot reshape {} to {}", shape_text(xs), shape_text(out)));
      out[static_cast<std::size_t>(inferred)] = total / known;
    }
  }
  if (checked_elements(out) != graph_.tensor(x).num_elements())
    fail("onnx-bad-model", fmt::format("cannot reshape {} to {}",
                                       shape_text(graph_.tensor(x).shape), shape_text(out)));
  if (graph_.tensor(x).is_constant()) {
    // A view of a constant is a constant of the new shape.
    expect_one_output(node);
    tensors_[node.output(0)] = graph_.add_constant(node.output(0), out, *graph_.tensor(x).data);
    return;
  }
  emit(node, OpKind::Reshape, {x}, out);
}

void Importer::convert_transpose(const onnx::NodeProto& node) {
  allow_attributes(node, {"perm"});
  expect_inputs(node, 1, 1);
  int x = input(node, 0);
  const auto& xs = graph_.tensor(x).shape;
  NodeAttributes attrs;
  attrs.perm = ints_attr(node, "perm");
  if (attrs.perm.empty())
    for (std::size_t i = xs.size(); i-- > 0;)
      attrs.perm.push_back(static_cast<std::int64_t>(i));
  std::vector<std::int64_t> sorted = attrs.perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<std::int64_t>(i) || sorted.size() != xs.size())
      fail("onnx-bad-model", fmt::format("perm {} is not a permutation of the {} axes",
                                         shape_text(attrs.perm), xs.size()));
  std::vector<std::int64_t> out;
  for (std::int64_t p : attrs.perm)
    out.push_back(xs[static_cast<std::size_t>(p)]);
  if (graph_.tensor(x).is_constant()) {
    // A transposed weight: permuted once here.
    expect_one_output(node);
    const std::vector<float>& in = *graph_.tensor(x).data;
    std::vector<float> data(in.size());
    std::vector<std::int64_t> in_strides(xs.size(), 1);
    for (std::size_t d = xs.size(); d-- > 1;)
      in_strides[d - 1] = in_strides[d] * xs[d];
    std::vector<std::int64_t> index(out.size(), 0);
    for (std::size_t flat = 0; flat < data.size(); ++flat) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < out.size(); ++d)
        at += index[d] * in_strides[static_cast<std::size_t>(attrs.perm[d])];
      data[flat] = in[static_cast<std::size_t>(at)];
      for (std::size_t d = out.size(); d-- > 0;) {
        if (++index[d] < out[d])
          break;
        index[d] = 0;
      }
    }
    tensors_[node.output(0)] = graph_.add_constant(node.output(0), out, std::move(data));
    return;
  }
  emit(node, OpKind::Transpose, {x}, out, attrs);
}

void Importer::convert_concat(const onnx::NodeProto& node) {
  allow_attributes(node, {"axis"});
  expect_inputs(node, 1, 64);
  std::vector<int> inputs;
  for (int i = 0; i < node.input_size(); ++i)
    inputs.push_back(input(node, i));
  std::vector<std::int64_t> out = graph_.tensor(inputs[0]).shape;
  NodeAttributes attrs;
  attrs.axis = normalize_axis(int_attr(node, "axis", 0), out.size(), "axis");
  const auto axis = static_cast<std::size_t>(attrs.axis);
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    const auto& s = graph_.tensor(inputs[i]).shape;
    bool fits = s.size() == out.size();
    for (std::size_t d = 0; fits && d < s.size(); ++d)
      fits = d == axis || s[d] == out[d];
    if (!fits)
      fail("onnx-bad-model", fmt::format("input {} of shape {} does not fit {} along axis {}", i,
                                         shape_text(s), shape_text(out), attrs.axis));
    out[axis] += s[axis];
  }
  emit(node, OpKind::Concat, inputs, out, attrs);
}

void Importer::convert_constant(const onnx::NodeProto& node) {
  allow_attributes(node, {"value", "value_float", "value_floats", "value_int", "value_ints"});
  expect_inputs(node, 0, 0);
  expect_one_output(node);
  const std::string& name = node.output(0);
  if (node.attribute_size() != 1)
    fail("onnx-bad-model", "a Constant needs exactly one value attribute");
  const onnx::AttributeProto& a = node.attribute(0);
  if (a.name() == "value") {
    add_constant_tensor(a.t(), name);
  } else if (a.name() == "value_float") {
    tensors_[name] = graph_.add_constant(name, {}, {a.f()});
  } else if (a.name() == "value_floats") {
    tensors_[name] = graph_.add_constant(name, {static_cast<std::int64_t>(a.floats_size())},
                                         {a.floats().begin(), a.floats().end()});
  } else if (a.name() == "value_int") {
    int64_constants_[name] = {a.i()};
  } else {
    int64_constants_[name] = {a.ints().begin(), a.ints().end()};
  }
}

void Importer::convert_identity(const onnx::NodeProto& node) {
  allow_attributes(node, {"seed", "ratio", "training_mode"});
  expect_inputs(node, 1, 3);
  if (node.op_type() == "Dropout" && has_input(node, 2))
    fail("onnx-unsupported", "a Dropout with a training_mode input is not supported; kiln runs "
                             "inference");
  expect_one_output(node);
  auto ints = int64_constants_.find(node.input(0));
  if (ints != int64_constants_.end())
    int64_constants_[node.output(0)] = ints->second;
  else
    tensors_[node.output(0)] = input(node, 0);
}

} // namespace kiln::graph
