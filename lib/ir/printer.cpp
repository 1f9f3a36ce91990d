#include "kiln/ir/printer.h"

#include "kiln/ir/compute_dag.h"

#include <fmt/format.h>

#include <cmath>
#include <ostream>

namespace kiln::ir {

std::string format_float(double value) {
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  std::string s = fmt::format("{}", value);
  if (s.find_first_of(".eEn") == std::string::npos)
    s += ".0";
  return s;
}

namespace {

// Precedence levels of the op language, lowest first.
enum Prec : int { OrPrec = 1, AndPrec, ComparePrec, AddPrec, MulPrec, UnaryPrec, PrimaryPrec };

class Printer {
public:
  std::string out;

  void print(const Expr& e, int context = 0) {
    int p = precedence(e);
    bool parens = p < context;
    if (parens)
      out += '(';
    print_node(e);
    if (parens)
      out += ')';
  }

private:
  static int precedence(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::IntImm:
      return e.as<IntImm>()->value < 0 ? UnaryPrec : PrimaryPrec;
    case ExprKind::FloatImm:
      return e.as<FloatImm>()->value < 0 ? UnaryPrec : PrimaryPrec;
    case ExprKind::Binary:
      switch (e.as<Binary>()->op) {
      case BinaryOp::Add:
      case BinaryOp::Sub:
        return AddPrec;
      case BinaryOp::Mul:
      case BinaryOp::Div:
      case BinaryOp::Mod:
        return MulPrec;
      case BinaryOp::Min:
      case BinaryOp::Max:
        return PrimaryPrec;
      }
      return PrimaryPrec;
    case ExprKind::Compare:
      return ComparePrec;
    case ExprKind::Logical:
      return e.as<Logical>()->op == LogicalOp::And ? AndPrec : OrPrec;
    case ExprKind::Not:
      return UnaryPrec;
    case ExprKind::Var:
    case ExprKind::Cast:
    case ExprKind::Select:
    case ExprKind::Call:
    case ExprKind::Load:
    case ExprKind::Reduce:
      return PrimaryPrec;
    }
    return PrimaryPrec;
  }

  void list(const std::vector<Expr>& es) {
    for (size_t i = 0; i < es.size(); ++i) {
      if (i)
        out += ", ";
      print(es[i]);
    }
  }

  // Left-associative infix: the right operand needs parentheses at equal precedence.
  void infix(const Expr& a, std::string_view op, const Expr& b, int p) {
    print(a, p);
    out += fmt::format(" {} ", op);
    print(b, p + 1);
  }

  void print_node(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::IntImm:
      out += std::to_string(e.as<IntImm>()->value);
      return;
    case ExprKind::FloatImm:
      out += format_float(e.as<FloatImm>()->value);
      return;
    case ExprKind::Var:
      out += e.as<Var>()->name;
      return;
    case ExprKind::Cast: {
      out += type_name(e.type());
      out += '(';
      print(e.as<Cast>()->value);
      out += ')';
      return;
    }
    case ExprKind::Binary: {
      const auto* b = e.as<Binary>();
      if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
        out += binary_op_name(b->op);
        out += '(';
        list({b->a, b->b});
        out += ')';
        return;
      }
      infix(b->a, binary_op_name(b->op), b->b, precedence(e));
      return;
    }
    case ExprKind::Compare: {
      // Comparisons do not chain: both operands bind tighter.
      const auto* c = e.as<Compare>();
      print(c->a, ComparePrec + 1);
      out += fmt::format(" {} ", compare_op_name(c->op));
      print(c->b, ComparePrec + 1);
      return;
    }
    case ExprKind::Logical: {
      const auto* l = e.as<Logical>();
      infix(l->a, l->op == LogicalOp::And ? "&&" : "||", l->b, precedence(e));
      return;
    }
    case ExprKind::Not:
      out += '!';
      print(e.as<Not>()->a, UnaryPrec);
      return;
    case ExprKind::Select: {
      const auto* s = e.as<Select>();
      out += "select(";
      list({s->cond, s->t, s->f});
      out += ')';
      return;
    }
    case ExprKind::Call: {
      const auto* c = e.as<Call>();
      out += intrinsic_name(c->fn);
      out += '(';
      list(c->args);
      out += ')';
      return;
    }
    case ExprKind::Load: {
      const auto* l = e.as<Load>();
      out += l->tensor;
      out += '[';
      list(l->indices);
      out += ']';
      return;
    }
    case ExprKind::Reduce: {
      const auto* r = e.as<Reduce>();
      out += reduce_op_name(r->op);
      out += '(';
      print(r->body);
      out += " for ";
      for (size_t i = 0; i < r->axes.size(); ++i)
        out += fmt::format("{}{} < {}", i ? ", " : "", r->axes[i].name, r->axes[i].extent);
      out += ')';
      return;
    }
    }
  }
};

} // namespace

std::string to_string(const Expr& e) {
  if (!e.defined())
    return "<undefined>";
  Printer p;
  p.print(e);
  return p.out;
}

std::string to_string(const ComputeDAG& dag) {
  std::string out = fmt::format("op {}\n", dag.name());
  for (const Stage& s : dag.stages()) {
    if (s.is_placeholder()) {
      out += fmt::format("{}input {} : {}[", s.is_constant ? "const " : "", s.name,
                         type_name(s.dtype));
      for (size_t i = 0; i < s.axes.size(); ++i)
        out += fmt::format("{}{}", i ? ", " : "", s.axes[i].extent);
      out += "]\n";
      continue;
    }
    out += fmt::format("{} {}[", s.is_output ? "output" : "stage", s.name);
    for (size_t i = 0; i < s.axes.size(); ++i)
      out += fmt::format("{}{} < {}", i ? ", " : "", s.axes[i].name, s.axes[i].extent);
    out += "] = " + to_string(s.body) + "\n";
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, const Expr& e) {
  return os << to_string(e);
}

} // namespace kiln::ir
