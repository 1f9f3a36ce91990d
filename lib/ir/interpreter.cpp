#include "kiln/ir/interpreter.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

namespace kiln::ir {

using Env = std::vector<std::pair<const std::string*, std::int64_t>>;

double round_to_type(double value, ScalarType type) {
  switch (type) {
  case ScalarType::Bool:
    return value != 0 ? 1 : 0;
  case ScalarType::I32:
    return static_cast<double>(static_cast<std::int32_t>(static_cast<std::int64_t>(value)));
  case ScalarType::I64:
    return static_cast<double>(static_cast<std::int64_t>(value));
  case ScalarType::F32:
    return static_cast<double>(static_cast<float>(value));
  case ScalarType::F64:
    return value;
  }
  return value;
}

Interpreter::Interpreter(const ComputeDAG& dag, std::map<std::string, std::vector<double>> inputs)
    : dag_(dag), memo_(dag.stages().size()) {
  for (size_t i = 0; i < dag.stages().size(); ++i) {
    const Stage& s = dag.stage(static_cast<int>(i));
    if (!s.is_placeholder())
      continue;
    auto it = inputs.find(s.name);
    if (it == inputs.end())
      throw UserError(Error("missing-input", fmt::format("no data for input '{}'", s.name)));
    if (static_cast<std::int64_t>(it->second.size()) != s.num_elements())
      throw UserError(
          Error("bad-input-size", fmt::format("input '{}' has {} elements but its shape needs {}",
                                              s.name, it->second.size(), s.num_elements())));
    memo_[i].values = std::move(it->second);
  }
}

/// Row-major offset of `index` in a stage, or -1 when out of bounds.
static std::int64_t offset_of(const Stage& s, std::span<const std::int64_t> index) {
  std::int64_t off = 0;
  for (size_t d = 0; d < s.axes.size(); ++d) {
    if (index[d] < 0 || index[d] >= s.axes[d].extent)
      return -1;
    off = off * s.axes[d].extent + index[d];
  }
  return off;
}

double Interpreter::at(int stage, std::span<const std::int64_t> index) {
  const Stage& s = dag_.stage(stage);
  KILN_ASSERT(index.size() == s.axes.size(), "index rank must match the stage");
  std::int64_t off = offset_of(s, index);
  KILN_ASSERT(off >= 0, "Interpreter::at out of bounds");
  Memo& m = memo_[stage];
  if (s.is_placeholder())
    return m.values[off];
  if (m.values.empty()) {
    m.values.assign(s.num_elements(), 0.0);
    m.known.assign(s.num_elements(), false);
  }
  if (m.known[off])
    return m.values[off];
  Env env;
  for (size_t d = 0; d < s.axes.size(); ++d)
    env.emplace_back(&s.axes[d].name, index[d]);
  double v = eval(s.body, env, stage, index);
  if (!is_float(s.dtype))
    v = round_to_type(v, s.dtype);
  m.values[off] = v;
  m.known[off] = true;
  return v;
}

std::vector<double> Interpreter::evaluate(int stage) {
  const Stage& s = dag_.stage(stage);
  std::vector<std::int64_t> index(s.axes.size(), 0);
  std::int64_t n = s.num_elements();
  std::vector<double> out(n);
  for (std::int64_t flat = 0; flat < n; ++flat) {
    out[flat] = at(stage, index);
    for (size_t d = s.axes.size(); d-- > 0;) {
      if (++index[d] < s.axes[d].extent)
        break;
      index[d] = 0;
    }
  }
  return out;
}

double Interpreter::load(const Load* l, Env& env, int stage, std::span<const std::int64_t> index) {
  int src = dag_.find_stage(l->tensor);
  KILN_ASSERT(src >= 0, "validated DAGs load only known stages");
  std::vector<std::int64_t> at_index;
  at_index.reserve(l->indices.size());
  for (const Expr& i : l->indices)
    at_index.push_back(static_cast<std::int64_t>(eval(i, env, stage, index)));
  if (offset_of(dag_.stage(src), at_index) < 0)
    throw UserError(Error(
        "out-of-bounds",
        fmt::format("stage '{}' at [{}] reads {}[{}], outside its shape [{}]; check the index "
                    "expression '{}' (pad the input with a select, or shrink the axes)",
                    dag_.stage(stage).name, fmt::join(index, ", "), l->tensor,
                    fmt::join(at_index, ", "), fmt::join(dag_.stage(src).shape(), ", "),
                    to_string(Load::make(l->tensor, l->indices, l->type)))));
  return at(src, at_index);
}

double Interpreter::eval(const Expr& e, Env& env, int stage, std::span<const std::int64_t> index) {
  switch (e.kind()) {
  case ExprKind::IntImm:
    return static_cast<double>(e.as<IntImm>()->value);
  case ExprKind::FloatImm:
    return e.as<FloatImm>()->value;
  case ExprKind::Var: {
    const std::string& name = e.as<Var>()->name;
    for (size_t i = env.size(); i-- > 0;)
      if (*env[i].first == name)
        return static_cast<double>(env[i].second);
    kiln_unreachable("validated DAGs bind every variable");
  }
  case ExprKind::Cast: {
    const auto* c = e.as<Cast>();
    double v = eval(c->value, env, stage, index);
    if (is_int(c->type) && is_float(c->value.type()))
      v = std::trunc(v); // float → int rounds toward zero, as fptosi
    return round_to_type(v, c->type);
  }
  case ExprKind::Binary: {
    const auto* b = e.as<Binary>();
    double x = eval(b->a, env, stage, index), y = eval(b->b, env, stage, index);
    bool integer = !is_float(b->type);
    switch (b->op) {
    case BinaryOp::Add:
      return integer ? round_to_type(x + y, b->type) : x + y;
    case BinaryOp::Sub:
      return integer ? round_to_type(x - y, b->type) : x - y;
    case BinaryOp::Mul:
      return integer ? round_to_type(x * y, b->type) : x * y;
    case BinaryOp::Div:
    case BinaryOp::Mod: {
      if (!integer)
        return b->op == BinaryOp::Div ? x / y : std::fmod(x, y);
      auto xi = static_cast<std::int64_t>(x), yi = static_cast<std::int64_t>(y);
      if (yi == 0)
        throw UserError(
            Error("division-by-zero",
                  fmt::format("stage '{}' at [{}] divides by zero in '{}'", dag_.stage(stage).name,
                              fmt::join(index, ", "), to_string(e))));
      return static_cast<double>(b->op == BinaryOp::Div ? floor_div(xi, yi) : floor_mod(xi, yi));
    }
    case BinaryOp::Min:
      return std::min(x, y);
    case BinaryOp::Max:
      return std::max(x, y);
    }
    kiln_unreachable("unknown binary op");
  }
  case ExprKind::Compare: {
    const auto* c = e.as<Compare>();
    double x = eval(c->a, env, stage, index), y = eval(c->b, env, stage, index);
    switch (c->op) {
    case CompareOp::EQ:
      return x == y;
    case CompareOp::NE:
      return x != y;
    case CompareOp::LT:
      return x < y;
    case CompareOp::LE:
      return x <= y;
    case CompareOp::GT:
      return x > y;
    case CompareOp::GE:
      return x >= y;
    }
    kiln_unreachable("unknown compare op");
  }
  case ExprKind::Logical: {
    const auto* l = e.as<Logical>();
    bool x = eval(l->a, env, stage, index) != 0;
    if (l->op == LogicalOp::And && !x)
      return 0;
    if (l->op == LogicalOp::Or && x)
      return 1;
    return eval(l->b, env, stage, index) != 0;
  }
  case ExprKind::Not:
    return eval(e.as<Not>()->a, env, stage, index) == 0;
  case ExprKind::Select: {
    // Only the taken branch is evaluated: padding reads out of bounds in the other.
    const auto* s = e.as<Select>();
    return eval(s->cond, env, stage, index) != 0 ? eval(s->t, env, stage, index)
                                                 : eval(s->f, env, stage, index);
  }
  case ExprKind::Call: {
    const auto* c = e.as<Call>();
    double x = eval(c->args[0], env, stage, index);
    switch (c->fn) {
    case Intrinsic::Exp:
      return std::exp(x);
    case Intrinsic::Log:
      return std::log(x);
    case Intrinsic::Sqrt:
      return std::sqrt(x);
    case Intrinsic::Abs:
      return std::fabs(x);
    case Intrinsic::Erf:
      return std::erf(x);
    case Intrinsic::Tanh:
      return std::tanh(x);
    }
    kiln_unreachable("unknown intrinsic");
  }
  case ExprKind::Load:
    return load(e.as<Load>(), env, stage, index);
  case ExprKind::Reduce: {
    const auto* r = e.as<Reduce>();
    double acc = r->op == ReduceOp::Sum   ? 0.0
                 : r->op == ReduceOp::Max ? -std::numeric_limits<double>::infinity()
                                          : std::numeric_limits<double>::infinity();
    size_t base = env.size();
    for (const IterVar& a : r->axes)
      env.emplace_back(&a.name, 0);
    while (true) {
      double v = eval(r->body, env, stage, index);
      switch (r->op) {
      case ReduceOp::Sum:
        acc += v;
        break;
      case ReduceOp::Max:
        acc = std::max(acc, v);
        break;
      case ReduceOp::Min:
        acc = std::min(acc, v);
        break;
      }
      size_t d = r->axes.size();
      while (d-- > 0) {
        if (++env[base + d].second < r->axes[d].extent)
          break;
        env[base + d].second = 0;
      }
      if (d == static_cast<size_t>(-1))
        break;
    }
    env.resize(base);
    return acc;
  }
  }
  kiln_unreachable("unknown expression kind");
}

} // namespace kiln::ir
