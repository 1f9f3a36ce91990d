// The stages of each op kind, in the forms of the ops in ops/ (conv2d_nchw,
// depthwise_conv2d, dense, softmax, layer_norm, max_pool2d), so that a task
// gets the sketches those ops get.
#include "group_lowering.h"

#include "kiln/support/error.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace kiln::graph {

using ir::Expr;

/// `e * k`, or `e` when k is 1.
static Expr times(Expr e, std::int64_t k) {
  return k == 1 ? e : e * Expr(k);
}

/// The reduction axes of a window: those of extent 1 are left out (their
/// index is 0), so a 1×1 conv reduces over its channels alone.
static std::vector<ir::IterVar> window_axes(std::initializer_list<ir::IterVar> all) {
  std::vector<ir::IterVar> kept;
  for (const ir::IterVar& a : all)
    if (a.extent > 1)
      kept.push_back(a);
  if (kept.empty()) // a reduction needs an axis: keep one, read at 0
    kept.push_back(*all.begin());
  return kept;
}

/// The index of axis `a` in a window: 0 when it has extent 1.
static Expr tap(const ir::IterVar& a) {
  return a.extent == 1 ? Expr(0) : ir::var(a);
}

ir::Tensor GroupLowering::lower(const Node& node) {
  switch (node.kind) {
  case OpKind::Conv:
    return lower_conv(node);
  case OpKind::Gemm:
    return lower_gemm(node);
  case OpKind::MatMul:
    return lower_matmul(node);
  case OpKind::MaxPool:
  case OpKind::AveragePool:
    return lower_pool(node);
  case OpKind::GlobalAveragePool:
    return lower_global_average_pool(node);
  case OpKind::ReduceMean:
    return lower_reduce_mean(node);
  case OpKind::Softmax:
    return lower_softmax(node);
  case OpKind::LayerNorm:
    return lower_layer_norm(node);
  case OpKind::Concat:
    return lower_concat(node);
  case OpKind::Transpose:
    return lower_transpose(node);
  case OpKind::Reshape:
    kiln_unreachable("a reshape is read through, not lowered");
  default:
    return lower_elementwise(node);
  }
}

ir::Tensor GroupLowering::padded(int tensor, const NodeAttributes& a, double fill) {
  const auto& s = graph_.tensor(tensor).shape;
  const std::int64_t top = a.pads[0], left = a.pads[1], bottom = a.pads[2], right = a.pads[3];
  if (top == 0 && left == 0 && bottom == 0 && right == 0) {
    // No padding: a stage that reads the input as it is.
    if (computed_.count(tensor))
      return computed_.at(tensor);
    if (graph_.tensor(tensor).is_constant())
      return placeholder(tensor, "weight");
    // A reshaped input cannot be handed over as a tensor; copy it.
    const int p = graph_.producer(tensor);
    if (p < 0 || !members_.count(p))
      return placeholder(tensor, "data");
  }
  const std::int64_t h = s[2], w = s[3];
  return builder_.compute(
      fresh("padded"), {{"n", s[0]}, {"c", s[1]}, {"h", h + top + bottom}, {"w", w + left + right}},
      [&](const std::vector<Expr>& v) {
        Expr inside = ir::logical_and(ir::logical_and(v[2] >= Expr(top), v[2] < Expr(h + top)),
                                      ir::logical_and(v[3] >= Expr(left), v[3] < Expr(w + left)));
        Expr value = read(tensor, {v[0], v[1], v[2] - Expr(top), v[3] - Expr(left)});
        if (top == 0 && left == 0 && bottom == 0 && right == 0)
          return value;
        return ir::select(inside, value, Expr(fill));
      });
}

ir::Tensor GroupLowering::lower_conv(const Node& node) {
  const NodeAttributes& a = node.attrs;
  const auto& xs = graph_.tensor(node.inputs[0]).shape;
  const auto& ws = graph_.tensor(node.inputs[1]).shape;
  const auto& out = graph_.tensor(node.output).shape;
  const std::int64_t channels_per_group = ws[1], k_per_group = ws[0] / a.group;
  const bool depthwise = a.group > 1 && channels_per_group == 1 && k_per_group == 1;
  ir::Tensor data = padded(node.inputs[0], a, 0.0);
  ir::Tensor kernel = depthwise ? placeholder(node.inputs[1], "kernel", {ws[0], ws[2], ws[3]})
                                : placeholder(node.inputs[1], "kernel");
  ir::IterVar rc{"rc", channels_per_group}, ry{"ry", ws[2]}, rx{"rx", ws[3]};
  (void)xs;
  auto body = [&](const std::vector<Expr>& v) {
    Expr y = times(v[2], a.strides[0]) + times(tap(ry), a.dilations[0]);
    Expr x = times(v[3], a.strides[1]) + times(tap(rx), a.dilations[1]);
    if (depthwise)
      return ir::sum(data(v[0], v[1], y, x) * kernel(v[1], tap(ry), tap(rx)),
                     window_axes({ry, rx}));
    Expr c = tap(rc);
    if (a.group > 1)
      c = times(v[1] / Expr(k_per_group), channels_per_group) + c;
    return ir::sum(data(v[0], c, y, x) * kernel(v[1], tap(rc), tap(ry), tap(rx)),
                   window_axes({rc, ry, rx}));
  };
  std::vector<ir::IterVar> axes{{"n", out[0]}, {"k", out[1]}, {"y", out[2]}, {"x", out[3]}};
  ir::Tensor conv = builder_.compute(fresh(depthwise ? "dwconv" : "conv"), axes, body);
  if (node.inputs.size() < 3)
    return conv;
  ir::Tensor bias = placeholder(node.inputs[2], "bias");
  return builder_.compute(fresh("biased"), axes,
                          [&](const std::vector<Expr>& v) { return conv(v) + bias(v[1]); });
}

ir::Tensor GroupLowering::lower_gemm(const Node& node) {
  const NodeAttributes& a = node.attrs;
  const auto& out = graph_.tensor(node.output).shape;
  const std::int64_t k = graph_.tensor(node.inputs[0]).shape[a.trans_a ? 0 : 1];
  ir::IterVar r{"r", k};
  std::vector<ir::IterVar> axes{{"i", out[0]}, {"j", out[1]}};
  if (graph_.tensor(node.inputs[1]).is_constant())
    placeholder(node.inputs[1], "weight");
  ir::Tensor dense = builder_.compute(fresh("dense"), axes, [&](const std::vector<Expr>& v) {
    Expr av = a.trans_a ? read(node.inputs[0], {ir::var(r), v[0]})
                        : read(node.inputs[0], {v[0], ir::var(r)});
    Expr bv = a.trans_b ? read(node.inputs[1], {v[1], ir::var(r)})
                        : read(node.inputs[1], {ir::var(r), v[1]});
    return ir::sum(av * bv, {r});
  });
  const bool has_c = node.inputs.size() == 3 && a.beta != 0.0f;
  if (a.alpha == 1.0f && !has_c)
    return dense;
  if (has_c && !graph_.tensor(node.inputs[2]).is_constant())
    placeholder(node.inputs[2], "data");
  else if (has_c)
    placeholder(node.inputs[2], "bias");
  return builder_.compute(fresh("biased"), axes, [&](const std::vector<Expr>& v) {
    Expr y = a.alpha == 1.0f ? dense(v) : Expr(static_cast<double>(a.alpha)) * dense(v);
    if (!has_c)
      return y;
    Expr c = read_broadcast(node.inputs[2], v);
    return y + (a.beta == 1.0f ? c : Expr(static_cast<double>(a.beta)) * c);
  });
}

ir::Tensor GroupLowering::lower_matmul(const Node& node) {
  const auto& as = graph_.tensor(node.inputs[0]).shape;
  const auto& bs = graph_.tensor(node.inputs[1]).shape;
  const auto& out = graph_.tensor(node.output).shape;
  const std::size_t rank = out.size();
  ir::IterVar r{"r", as.back()};
  if (graph_.tensor(node.inputs[1]).is_constant())
    placeholder(node.inputs[1], "weight");
  // Batch axes broadcast as in numpy; the last two multiply.
  auto operand = [&](int tensor, const std::vector<std::int64_t>& shape, const std::vector<Expr>& v,
                     Expr row, Expr col) {
    std::vector<Expr> at;
    const std::size_t batch = shape.size() - 2, offset = rank - 2 - batch;
    for (std::size_t d = 0; d < batch; ++d)
      at.push_back(shape[d] == 1 ? Expr(0) : v[offset + d]);
    at.push_back(row);
    at.push_back(col);
    return read(tensor, at);
  };
  std::vector<ir::IterVar> axes;
  for (std::size_t d = 0; d + 2 < rank; ++d)
    axes.push_back({fmt::format("b{}", d), out[d]});
  axes.push_back({"i", out[rank - 2]});
  axes.push_back({"j", out[rank - 1]});
  return builder_.compute(fresh("matmul"), axes, [&](const std::vector<Expr>& v) {
    return ir::sum(operand(node.inputs[0], as, v, v[rank - 2], ir::var(r)) *
                       operand(node.inputs[1], bs, v, ir::var(r), v[rank - 1]),
                   {r});
  });
}

static Expr integer_power(Expr x, int n) {
  Expr p = x;
  for (int i = 1; i < n; ++i)
    p = p * x;
  return p;
}

ir::Tensor GroupLowering::lower_elementwise(const Node& node) {
  const auto& out = graph_.tensor(node.output).shape;
  const NodeAttributes& a = node.attrs;
  // Name the constants an op reads after their role.
  const char* role = node.kind == OpKind::Add   ? "bias"
                     : node.kind == OpKind::Mul ? "scale"
                     : node.kind == OpKind::Sub ? "shift"
                                                : "divisor";
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const TensorInfo& t = graph_.tensor(node.inputs[i]);
    if (t.is_constant() && t.num_elements() > 1)
      placeholder(node.inputs[i],
                  node.kind == OpKind::BatchNorm ? (i == 1 ? "bn_scale" : "bn_shift") : role);
  }
  std::string name(op_kind_name(node.kind));
  for (char& ch : name)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (node.kind == OpKind::Erf || node.kind == OpKind::Sqrt || node.kind == OpKind::BatchNorm)
    name += "_out"; // not the name of a function of the op language
  return builder_.compute(fresh(name), axes(out), [&](const std::vector<Expr>& v) {
    auto in = [&](std::size_t i) { return read_broadcast(node.inputs[i], v); };
    switch (node.kind) {
    case OpKind::Add:
      return in(0) + in(1);
    case OpKind::Sub:
      return in(0) - in(1);
    case OpKind::Mul:
      return in(0) * in(1);
    case OpKind::Div:
      return in(0) / in(1);
    case OpKind::Relu:
      return ir::max(in(0), Expr(0.0));
    case OpKind::Sigmoid:
      return Expr(1.0) / (Expr(1.0) + ir::exp(-in(0)));
    case OpKind::Erf:
      return ir::erf(in(0));
    case OpKind::Sqrt:
      return ir::sqrt(in(0));
    case OpKind::Clip: {
      Expr y = in(0);
      if (a.clip_min > -std::numeric_limits<float>::infinity())
        y = ir::max(y, Expr(static_cast<double>(a.clip_min)));
      if (a.clip_max < std::numeric_limits<float>::infinity())
        y = ir::min(y, Expr(static_cast<double>(a.clip_max)));
      return y;
    }
    case OpKind::Pow: {
      const float e = a.exponent;
      Expr x = in(0);
      if (e == 0.5f)
        return ir::sqrt(x);
      if (e == -0.5f)
        return Expr(1.0) / ir::sqrt(x);
      const int n = static_cast<int>(std::fabs(e));
      if (n == 0)
        return Expr(1.0);
      return e > 0 ? integer_power(x, n) : Expr(1.0) / integer_power(x, n);
    }
    case OpKind::BatchNorm: {
      // one scale and shift per channel (axis 1)
      Expr c = out.size() > 1 ? v[1] : Expr(0);
      return in(0) * read(node.inputs[1], {c}) + read(node.inputs[2], {c});
    }
    default:
      kiln_unreachable("not an elementwise op");
    }
  });
}

ir::Tensor GroupLowering::lower_reduce_mean(const Node& node) {
  const NodeAttributes& a = node.attrs;
  const auto& in = graph_.tensor(node.inputs[0]).shape;
  const auto& out = graph_.tensor(node.output).shape;
  std::vector<ir::IterVar> reduced;
  std::int64_t count = 1;
  for (std::int64_t d : a.axes) {
    reduced.push_back({fmt::format("r{}", d), in[static_cast<std::size_t>(d)]});
    count *= in[static_cast<std::size_t>(d)];
  }
  auto input_index = [&](const std::vector<Expr>& v) {
    std::vector<Expr> at;
    std::size_t next_out = 0, next_reduced = 0;
    for (std::size_t d = 0; d < in.size(); ++d) {
      if (next_reduced < a.axes.size() && a.axes[next_reduced] == static_cast<std::int64_t>(d)) {
        at.push_back(ir::var(reduced[next_reduced++]));
        if (a.keepdims)
          ++next_out;
      } else {
        at.push_back(v[next_out++]);
      }
    }
    return at;
  };
  ir::Tensor sum = builder_.compute(fresh("sum"), axes(out), [&](const std::vector<Expr>& v) {
    return ir::sum(read(node.inputs[0], input_index(v)), reduced);
  });
  return builder_.compute(fresh("mean"), axes(out), [&](const std::vector<Expr>& v) {
    return sum(v) / Expr(static_cast<double>(count));
  });
}

/// The axes of `shape` without axis `skip` (at least one: a unit axis).
static std::vector<std::int64_t> without_axis(const std::vector<std::int64_t>& shape,
                                              std::size_t from) {
  std::vector<std::int64_t> out(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(from));
  if (out.empty())
    out.push_back(1);
  return out;
}

ir::Tensor GroupLowering::lower_softmax(const Node& node) {
  const auto& s = graph_.tensor(node.inputs[0]).shape;
  const auto axis = static_cast<std::size_t>(node.attrs.axis);
  // Rows: every axis but `axis`; the reduced stages are indexed by them.
  std::vector<std::int64_t> rows;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (d != axis)
      rows.push_back(s[d]);
  const bool no_rows = rows.empty();
  if (no_rows)
    rows.push_back(1);
  ir::IterVar j{"j", s[axis]};
  auto row_of = [&](const std::vector<Expr>& full) {
    std::vector<Expr> r;
    for (std::size_t d = 0; d < s.size(); ++d)
      if (d != axis)
        r.push_back(full[d]);
    if (r.empty())
      r.push_back(Expr(0));
    return r;
  };
  auto full_of = [&](const std::vector<Expr>& row, Expr along) {
    std::vector<Expr> f;
    std::size_t next = 0;
    for (std::size_t d = 0; d < s.size(); ++d)
      f.push_back(d == axis ? along : row[next++]);
    return f;
  };
  (void)no_rows;
  ir::Tensor row_max =
      builder_.compute(fresh("row_max"), axes(rows), [&](const std::vector<Expr>& v) {
        return ir::reduce_max(read(node.inputs[0], full_of(v, ir::var(j))), {j});
      });
  ir::Tensor exps = builder_.compute(fresh("exps"), axes(s), [&](const std::vector<Expr>& v) {
    return ir::exp(read(node.inputs[0], v) - row_max(row_of(v)));
  });
  ir::Tensor row_sum =
      builder_.compute(fresh("row_sum"), axes(rows), [&](const std::vector<Expr>& v) {
        return ir::sum(exps(full_of(v, ir::var(j))), {j});
      });
  return builder_.compute(fresh("softmax"), axes(s),
                          [&](const std::vector<Expr>& v) { return exps(v) / row_sum(row_of(v)); });
}

ir::Tensor GroupLowering::lower_layer_norm(const Node& node) {
  const auto& s = graph_.tensor(node.inputs[0]).shape;
  const auto axis = static_cast<std::size_t>(node.attrs.axis);
  std::vector<std::int64_t> rows = without_axis(s, axis);
  const bool unit_row = axis == 0;
  std::vector<ir::IterVar> inner;
  std::int64_t count = 1;
  for (std::size_t d = axis; d < s.size(); ++d) {
    inner.push_back({fmt::format("r{}", d), s[d]});
    count *= s[d];
  }
  auto full_of = [&](const std::vector<Expr>& row) {
    std::vector<Expr> f(unit_row ? std::vector<Expr>{} : row);
    for (const ir::IterVar& r : inner)
      f.push_back(ir::var(r));
    return f;
  };
  auto row_of = [&](const std::vector<Expr>& full) {
    if (unit_row)
      return std::vector<Expr>{Expr(0)};
    return std::vector<Expr>(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(axis));
  };
  ir::Tensor gamma = placeholder(node.inputs[1], "gamma");
  const bool has_beta = node.inputs.size() > 2;
  ir::Tensor beta = has_beta ? placeholder(node.inputs[2], "beta") : gamma;
  const Expr n(static_cast<double>(count));
  ir::Tensor row_sum =
      builder_.compute(fresh("row_sum"), axes(rows), [&](const std::vector<Expr>& v) {
        return ir::sum(read(node.inputs[0], full_of(v)), inner);
      });
  ir::Tensor centered =
      builder_.compute(fresh("centered"), axes(s), [&](const std::vector<Expr>& v) {
        return read(node.inputs[0], v) - row_sum(row_of(v)) / n;
      });
  ir::Tensor row_var =
      builder_.compute(fresh("row_var"), axes(rows), [&](const std::vector<Expr>& v) {
        std::vector<Expr> at = full_of(v);
        return ir::sum(centered(at) * centered(at), inner);
      });
  return builder_.compute(fresh("normalized"), axes(s), [&](const std::vector<Expr>& v) {
    std::vector<Expr> feature(v.begin() + static_cast<std::ptrdiff_t>(axis), v.end());
    Expr y = centered(v) /
             ir::sqrt(row_var(row_of(v)) / n + Expr(static_cast<double>(node.attrs.epsilon))) *
             gamma(feature);
    return has_beta ? y + beta(feature) : y;
  });
}

ir::Tensor GroupLowering::lower_pool(const Node& node) {
  const NodeAttributes& a = node.attrs;
  const auto& s = graph_.tensor(node.inputs[0]).shape;
  const auto& out = graph_.tensor(node.output).shape;
  const bool max = node.kind == OpKind::MaxPool;
  ir::Tensor data = padded(node.inputs[0], a, max ? -std::numeric_limits<double>::infinity() : 0.0);
  ir::IterVar ry{"ry", a.kernel_shape[0]}, rx{"rx", a.kernel_shape[1]};
  std::vector<ir::IterVar> axes{{"n", out[0]}, {"c", out[1]}, {"y", out[2]}, {"x", out[3]}};
  auto window = [&](const std::vector<Expr>& v) {
    return data(v[0], v[1], times(v[2], a.strides[0]) + times(tap(ry), a.dilations[0]),
                times(v[3], a.strides[1]) + times(tap(rx), a.dilations[1]));
  };
  if (max)
    return builder_.compute(fresh("pool"), axes, [&](const std::vector<Expr>& v) {
      return ir::reduce_max(window(v), window_axes({ry, rx}));
    });
  ir::Tensor sum = builder_.compute(fresh("pool_sum"), axes, [&](const std::vector<Expr>& v) {
    return ir::sum(window(v), window_axes({ry, rx}));
  });
  const bool pads = a.pads[0] || a.pads[1] || a.pads[2] || a.pads[3];
  return builder_.compute(fresh("pool"), axes, [&](const std::vector<Expr>& v) {
    if (a.count_include_pad || !pads)
      return sum(v) / Expr(static_cast<double>(a.kernel_shape[0] * a.kernel_shape[1]));
    // Only the window's elements inside the input count.
    auto count = [&](Expr o, std::size_t d) {
      const std::int64_t extent = (a.kernel_shape[d] - 1) * a.dilations[d] + 1;
      Expr begin = o * Expr(a.strides[d]) - Expr(a.pads[d]);
      Expr in_begin = ir::max(begin, Expr(0));
      Expr in_end = ir::min(begin + Expr(extent), Expr(s[2 + d]));
      // With dilation, only every dilations[d]-th position is a tap.
      if (a.dilations[d] == 1)
        return in_end - in_begin;
      Expr first = begin + (in_begin - begin + Expr(a.dilations[d] - 1)) / Expr(a.dilations[d]) *
                               Expr(a.dilations[d]);
      return (in_end - first + Expr(a.dilations[d] - 1)) / Expr(a.dilations[d]);
    };
    return sum(v) / ir::cast(ir::ScalarType::F32, count(v[2], 0) * count(v[3], 1));
  });
}

ir::Tensor GroupLowering::lower_global_average_pool(const Node& node) {
  const auto& s = graph_.tensor(node.inputs[0]).shape;
  const auto& out = graph_.tensor(node.output).shape;
  std::vector<ir::IterVar> spatial;
  std::int64_t count = 1;
  for (std::size_t d = 2; d < s.size(); ++d) {
    spatial.push_back({fmt::format("r{}", d), s[d]});
    count *= s[d];
  }
  ir::Tensor sum = builder_.compute(fresh("pool_sum"), axes(out), [&](const std::vector<Expr>& v) {
    std::vector<Expr> at{v[0], v[1]};
    for (const ir::IterVar& r : spatial)
      at.push_back(ir::var(r));
    return ir::sum(read(node.inputs[0], at), spatial);
  });
  return builder_.compute(fresh("pool"), axes(out), [&](const std::vector<Expr>& v) {
    return sum(v) / Expr(static_cast<double>(count));
  });
}

ir::Tensor GroupLowering::lower_transpose(const Node& node) {
  const auto& out = graph_.tensor(node.output).shape;
  const std::vector<std::int64_t>& perm = node.attrs.perm;
  return builder_.compute(fresh("transpose"), axes(out), [&](const std::vector<Expr>& v) {
    std::vector<Expr> at(v.size());
    for (std::size_t d = 0; d < perm.size(); ++d)
      at[static_cast<std::size_t>(perm[d])] = v[d];
    return read(node.inputs[0], at);
  });
}

ir::Tensor GroupLowering::lower_concat(const Node& node) {
  const auto& out = graph_.tensor(node.output).shape;
  const auto axis = static_cast<std::size_t>(node.attrs.axis);
  for (int t : node.inputs)
    if (graph_.tensor(t).is_constant())
      placeholder(t, "part");
  return builder_.compute(fresh("concat"), axes(out), [&](const std::vector<Expr>& v) {
    // Nested selects from the last part back: the first part whose range
    // holds the index along `axis` is read.
    std::vector<std::int64_t> begins;
    std::int64_t at = 0;
    for (int t : node.inputs) {
      begins.push_back(at);
      at += graph_.tensor(t).shape[axis];
    }
    auto part = [&](std::size_t i) {
      std::vector<Expr> index = v;
      if (begins[i] != 0)
        index[axis] = v[axis] - Expr(begins[i]);
      return read(node.inputs[i], index);
    };
    Expr e = part(node.inputs.size() - 1);
    for (std::size_t i = node.inputs.size() - 1; i-- > 0;)
      e = ir::select(v[axis] < Expr(begins[i + 1]), part(i), e);
    return e;
  });
}

} // namespace kiln::graph
