#include "kiln/ir/expr.h"

#include "kiln/ir/printer.h"
#include "kiln/support/error.h"

#include <fmt/format.h>

namespace kiln::ir {

Expr::Expr(int value) : Expr(IntImm::make(value)) {}
Expr::Expr(std::int64_t value) : Expr(IntImm::make(value)) {}
Expr::Expr(double value) : Expr(FloatImm::make(value)) {}

[[noreturn]] static void type_error(const std::string& message) {
  throw UserError(Error("type-error", message));
}

static bool is_literal(const Expr& e) {
  return e.kind() == ExprKind::IntImm || e.kind() == ExprKind::FloatImm;
}

/// A literal converted to `type` (literals adapt to the other operand).
static Expr retype_literal(const Expr& e, ScalarType type) {
  if (const auto* i = e.as<IntImm>())
    return is_float(type) ? FloatImm::make(static_cast<double>(i->value), type)
                          : IntImm::make(i->value, type);
  const auto* f = e.as<FloatImm>();
  KILN_ASSERT(f, "retype_literal takes literals");
  if (is_float(type))
    return FloatImm::make(f->value, type);
  return Cast::make(type, e);
}

static ScalarType wider(ScalarType a, ScalarType b) {
  if (a == b)
    return a;
  if (is_float(a) != is_float(b))
    return is_float(a) ? a : b;
  return bits(a) >= bits(b) ? a : b;
}

/// Brings two operands to one type: a literal takes the other's type, then
/// int→float and narrow→wide, as in C.
static void unify(Expr& a, Expr& b, std::string_view what) {
  if (a.type() == ScalarType::Bool || b.type() == ScalarType::Bool)
    type_error(fmt::format("'{}' needs numbers, but an operand is a condition (bool): '{}' {} '{}'",
                           what, to_string(a), what, to_string(b)));
  if (a.type() == b.type())
    return;
  if (is_literal(a) && !is_literal(b)) {
    if (!(is_float(a.type()) && is_int(b.type()))) {
      a = retype_literal(a, b.type());
      return;
    }
  }
  if (is_literal(b) && !is_literal(a)) {
    if (!(is_float(b.type()) && is_int(a.type()))) {
      b = retype_literal(b, a.type());
      return;
    }
  }
  ScalarType t = wider(a.type(), b.type());
  if (a.type() != t)
    a = is_literal(a) ? retype_literal(a, t) : Cast::make(t, a);
  if (b.type() != t)
    b = is_literal(b) ? retype_literal(b, t) : Cast::make(t, b);
}

Expr IntImm::make(std::int64_t value, ScalarType type) {
  KILN_ASSERT(is_int(type) || type == ScalarType::Bool, "IntImm must have an integer type");
  return Expr(std::make_shared<IntImm>(value, type));
}

Expr FloatImm::make(double value, ScalarType type) {
  KILN_ASSERT(is_float(type), "FloatImm must have a float type");
  return Expr(std::make_shared<FloatImm>(value, type));
}

Expr Var::make(std::string name) {
  return Expr(std::make_shared<Var>(std::move(name)));
}

Expr Cast::make(ScalarType type, Expr value) {
  KILN_ASSERT(value.defined(), "cast of an undefined expression");
  if (value.type() == type)
    return value;
  return Expr(std::make_shared<Cast>(std::move(value), type));
}

Expr Binary::make(BinaryOp op, Expr a, Expr b) {
  KILN_ASSERT(a.defined() && b.defined(), "binary operand undefined");
  unify(a, b, binary_op_name(op));
  ScalarType t = a.type();
  return Expr(std::make_shared<Binary>(op, std::move(a), std::move(b), t));
}

Expr Compare::make(CompareOp op, Expr a, Expr b) {
  KILN_ASSERT(a.defined() && b.defined(), "compare operand undefined");
  unify(a, b, compare_op_name(op));
  return Expr(std::make_shared<Compare>(op, std::move(a), std::move(b)));
}

Expr Logical::make(LogicalOp op, Expr a, Expr b) {
  const char* name = op == LogicalOp::And ? "&&" : "||";
  if (a.type() != ScalarType::Bool || b.type() != ScalarType::Bool)
    type_error(fmt::format("'{}' needs conditions (comparisons) on both sides, got '{}' {} '{}'",
                           name, to_string(a), name, to_string(b)));
  return Expr(std::make_shared<Logical>(op, std::move(a), std::move(b)));
}

Expr Not::make(Expr a) {
  if (a.type() != ScalarType::Bool)
    type_error(fmt::format("'!' needs a condition (a comparison), got '{}'", to_string(a)));
  return Expr(std::make_shared<Not>(std::move(a)));
}

Expr Select::make(Expr cond, Expr t, Expr f) {
  if (cond.type() != ScalarType::Bool)
    type_error(fmt::format("the condition of select must be a comparison, got '{}' of type {}",
                           to_string(cond), type_name(cond.type())));
  if (t.type() == ScalarType::Bool || f.type() == ScalarType::Bool) {
    if (t.type() != f.type())
      type_error("both branches of select must be conditions, or both numbers");
  } else {
    unify(t, f, "select");
  }
  ScalarType type = t.type();
  return Expr(std::make_shared<Select>(std::move(cond), std::move(t), std::move(f), type));
}

Expr Call::make(Intrinsic fn, std::vector<Expr> args) {
  KILN_ASSERT(args.size() == 1, "math functions take one argument");
  Expr& x = args[0];
  if (x.type() == ScalarType::Bool)
    type_error(
        fmt::format("{} needs a number, got the condition '{}'", intrinsic_name(fn), to_string(x)));
  // Math functions work on floats; an integer argument is converted.
  if (!is_float(x.type()))
    x = is_literal(x) ? retype_literal(x, ScalarType::F32) : Cast::make(ScalarType::F32, x);
  ScalarType t = x.type();
  return Expr(std::make_shared<Call>(fn, std::move(args), t));
}

Expr Load::make(std::string tensor, std::vector<Expr> indices, ScalarType type) {
  for (Expr& index : indices) {
    if (!is_int(index.type()))
      type_error(fmt::format("index '{}' of '{}' has type {}; indices must be integers",
                             to_string(index), tensor, type_name(index.type())));
    if (index.type() != ScalarType::I64)
      index = Cast::make(ScalarType::I64, index);
  }
  return Expr(std::make_shared<Load>(std::move(tensor), std::move(indices), type));
}

Expr Reduce::make(ReduceOp op, Expr body, std::vector<IterVar> axes) {
  if (body.type() == ScalarType::Bool)
    type_error(fmt::format("{} needs numbers, got the condition '{}'", reduce_op_name(op),
                           to_string(body)));
  if (axes.empty())
    throw UserError(Error("empty-reduction",
                          fmt::format("{} needs at least one reduction axis", reduce_op_name(op))));
  return Expr(std::make_shared<Reduce>(op, std::move(body), std::move(axes)));
}

Expr operator+(Expr a, Expr b) {
  return Binary::make(BinaryOp::Add, std::move(a), std::move(b));
}
Expr operator-(Expr a, Expr b) {
  return Binary::make(BinaryOp::Sub, std::move(a), std::move(b));
}
Expr operator*(Expr a, Expr b) {
  return Binary::make(BinaryOp::Mul, std::move(a), std::move(b));
}
Expr operator/(Expr a, Expr b) {
  return Binary::make(BinaryOp::Div, std::move(a), std::move(b));
}
Expr operator%(Expr a, Expr b) {
  return Binary::make(BinaryOp::Mod, std::move(a), std::move(b));
}
Expr operator-(Expr a) {
  if (const auto* i = a.as<IntImm>())
    return IntImm::make(-i->value, i->type);
  if (const auto* f = a.as<FloatImm>())
    return FloatImm::make(-f->value, f->type);
  Expr zero = is_float(a.type()) ? FloatImm::make(0.0, a.type()) : IntImm::make(0, a.type());
  return Binary::make(BinaryOp::Sub, zero, std::move(a));
}
Expr min(Expr a, Expr b) {
  return Binary::make(BinaryOp::Min, std::move(a), std::move(b));
}
Expr max(Expr a, Expr b) {
  return Binary::make(BinaryOp::Max, std::move(a), std::move(b));
}
Expr operator==(Expr a, Expr b) {
  return Compare::make(CompareOp::EQ, std::move(a), std::move(b));
}
Expr operator!=(Expr a, Expr b) {
  return Compare::make(CompareOp::NE, std::move(a), std::move(b));
}
Expr operator<(Expr a, Expr b) {
  return Compare::make(CompareOp::LT, std::move(a), std::move(b));
}
Expr operator<=(Expr a, Expr b) {
  return Compare::make(CompareOp::LE, std::move(a), std::move(b));
}
Expr operator>(Expr a, Expr b) {
  return Compare::make(CompareOp::GT, std::move(a), std::move(b));
}
Expr operator>=(Expr a, Expr b) {
  return Compare::make(CompareOp::GE, std::move(a), std::move(b));
}
Expr logical_and(Expr a, Expr b) {
  return Logical::make(LogicalOp::And, std::move(a), std::move(b));
}
Expr logical_or(Expr a, Expr b) {
  return Logical::make(LogicalOp::Or, std::move(a), std::move(b));
}
Expr logical_not(Expr a) {
  return Not::make(std::move(a));
}
Expr select(Expr cond, Expr t, Expr f) {
  return Select::make(std::move(cond), std::move(t), std::move(f));
}
Expr cast(ScalarType type, Expr value) {
  return Cast::make(type, std::move(value));
}
Expr exp(Expr x) {
  return Call::make(Intrinsic::Exp, {std::move(x)});
}
Expr log(Expr x) {
  return Call::make(Intrinsic::Log, {std::move(x)});
}
Expr sqrt(Expr x) {
  return Call::make(Intrinsic::Sqrt, {std::move(x)});
}
Expr abs(Expr x) {
  return Call::make(Intrinsic::Abs, {std::move(x)});
}
Expr erf(Expr x) {
  return Call::make(Intrinsic::Erf, {std::move(x)});
}
Expr tanh(Expr x) {
  return Call::make(Intrinsic::Tanh, {std::move(x)});
}
Expr sum(Expr body, std::vector<IterVar> axes) {
  return Reduce::make(ReduceOp::Sum, std::move(body), std::move(axes));
}
Expr reduce_max(Expr body, std::vector<IterVar> axes) {
  return Reduce::make(ReduceOp::Max, std::move(body), std::move(axes));
}
Expr reduce_min(Expr body, std::vector<IterVar> axes) {
  return Reduce::make(ReduceOp::Min, std::move(body), std::move(axes));
}
Expr var(const IterVar& axis) {
  return Var::make(axis.name);
}

std::string_view binary_op_name(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::Min:
    return "min";
  case BinaryOp::Max:
    return "max";
  }
  return "?";
}

std::string_view compare_op_name(CompareOp op) {
  switch (op) {
  case CompareOp::EQ:
    return "==";
  case CompareOp::NE:
    return "!=";
  case CompareOp::LT:
    return "<";
  case CompareOp::LE:
    return "<=";
  case CompareOp::GT:
    return ">";
  case CompareOp::GE:
    return ">=";
  }
  return "?";
}

std::string_view intrinsic_name(Intrinsic fn) {
  switch (fn) {
  case Intrinsic::Exp:
    return "exp";
  case Intrinsic::Log:
    return "log";
  case Intrinsic::Sqrt:
    return "sqrt";
  case Intrinsic::Abs:
    return "abs";
  case Intrinsic::Erf:
    return "erf";
  case Intrinsic::Tanh:
    return "tanh";
  }
  return "?";
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  }
  return "?";
}

static bool equal_all(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i]))
      return false;
  return true;
}

bool equal(const Expr& a, const Expr& b) {
  if (a.same_as(b))
    return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.type() != b.type())
    return false;
  switch (a.kind()) {
  case ExprKind::IntImm:
    return a.as<IntImm>()->value == b.as<IntImm>()->value;
  case ExprKind::FloatImm:
    return a.as<FloatImm>()->value == b.as<FloatImm>()->value;
  case ExprKind::Var:
    return a.as<Var>()->name == b.as<Var>()->name;
  case ExprKind::Cast:
    return equal(a.as<Cast>()->value, b.as<Cast>()->value);
  case ExprKind::Binary: {
    const auto *x = a.as<Binary>(), *y = b.as<Binary>();
    return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
  }
  case ExprKind::Compare: {
    const auto *x = a.as<Compare>(), *y = b.as<Compare>();
    return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
  }
  case ExprKind::Logical: {
    const auto *x = a.as<Logical>(), *y = b.as<Logical>();
    return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
  }
  case ExprKind::Not:
    return equal(a.as<Not>()->a, b.as<Not>()->a);
  case ExprKind::Select: {
    const auto *x = a.as<Select>(), *y = b.as<Select>();
    return equal(x->cond, y->cond) && equal(x->t, y->t) && equal(x->f, y->f);
  }
  case ExprKind::Call: {
    const auto *x = a.as<Call>(), *y = b.as<Call>();
    return x->fn == y->fn && equal_all(x->args, y->args);
  }
  case ExprKind::Load: {
    const auto *x = a.as<Load>(), *y = b.as<Load>();
    return x->tensor == y->tensor && equal_all(x->indices, y->indices);
  }
  case ExprKind::Reduce: {
    const auto *x = a.as<Reduce>(), *y = b.as<Reduce>();
    return x->op == y->op && x->axes == y->axes && equal(x->body, y->body);
  }
  }
  return false;
}

} // namespace kiln::ir
