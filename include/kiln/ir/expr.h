// Expressions of the compute DAG and of the loop nest.
//
// Nodes are immutable structs with public fields, shared through the Expr
// handle, in the style of Halide's IR: one X-macro lists every node kind and
// generates the kind enum, the visitor and the mutator, so adding a node is a
// compile error everywhere it must be handled.
#ifndef KILN_IR_EXPR_H
#define KILN_IR_EXPR_H

#include "kiln/ir/type.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace kiln::ir {

#define KILN_FOR_EACH_EXPR_NODE(X)                                                                 \
  X(IntImm)                                                                                        \
  X(FloatImm)                                                                                      \
  X(Var)                                                                                           \
  X(Cast)                                                                                          \
  X(Binary)                                                                                        \
  X(Compare)                                                                                       \
  X(Logical)                                                                                       \
  X(Not)                                                                                           \
  X(Select)                                                                                        \
  X(Call)                                                                                          \
  X(Load)                                                                                          \
  X(Reduce)

enum class ExprKind : std::uint8_t {
#define KILN_EXPR_KIND(N) N,
  KILN_FOR_EACH_EXPR_NODE(KILN_EXPR_KIND)
#undef KILN_EXPR_KIND
};

struct ExprNode {
  ExprNode(ExprKind k, ScalarType t, std::uint32_t d = 1) : kind(k), type(t), depth(d) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const ScalarType type;
  /// Levels of the tree under this node, itself included (a leaf is 1);
  /// kept so that limits.h's depth limit is checked in O(1) per node.
  const std::uint32_t depth;
};

/// A shared handle to an immutable expression node. Cheap to copy.
class Expr {
public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  /// An integer literal (i64, the index type; adapts to the other operand's
  /// type in arithmetic).
  Expr(int value);
  Expr(std::int64_t value);
  /// A float literal (f32; adapts to the other operand's type in arithmetic).
  Expr(double value);

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  ScalarType type() const { return node_->type; }
  ExprKind kind() const { return node_->kind; }
  /// Levels of the tree (0 for an undefined expression).
  std::uint32_t depth() const { return node_ ? node_->depth : 0; }
  /// The node as type T, or nullptr when it is another kind.
  template <typename T> const T* as() const {
    return node_ && node_->kind == T::static_kind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  /// Same node object (not structural equality; see equal()).
  bool same_as(const Expr& other) const { return node_ == other.node_; }

private:
  std::shared_ptr<const ExprNode> node_;
};

/// One more than the deepest of `children`: the depth of their parent.
inline std::uint32_t parent_depth(std::initializer_list<const Expr*> children) {
  std::uint32_t d = 0;
  for (const Expr* c : children)
    d = c->depth() > d ? c->depth() : d;
  return d + 1;
}
inline std::uint32_t parent_depth(const std::vector<Expr>& children) {
  std::uint32_t d = 0;
  for (const Expr& c : children)
    d = c.depth() > d ? c.depth() : d;
  return d + 1;
}

/// An iteration axis: a name and the range [0, extent).
struct IterVar {
  std::string name;
  std::int64_t extent = 0;
  bool operator==(const IterVar&) const = default;
};

enum class BinaryOp : std::uint8_t { Add, Sub, Mul, Div, Mod, Min, Max };
enum class CompareOp : std::uint8_t { EQ, NE, LT, LE, GT, GE };
enum class LogicalOp : std::uint8_t { And, Or };
enum class Intrinsic : std::uint8_t { Exp, Log, Sqrt, Abs, Erf, Tanh };
enum class ReduceOp : std::uint8_t { Sum, Max, Min };

#define KILN_DECLARE_NODE(N) static constexpr ExprKind static_kind = ExprKind::N;

struct IntImm : ExprNode {
  KILN_DECLARE_NODE(IntImm)
  IntImm(std::int64_t v, ScalarType t) : ExprNode(static_kind, t), value(v) {}
  const std::int64_t value;
  static Expr make(std::int64_t value, ScalarType type = ScalarType::I64);
};

struct FloatImm : ExprNode {
  KILN_DECLARE_NODE(FloatImm)
  FloatImm(double v, ScalarType t) : ExprNode(static_kind, t), value(v) {}
  const double value;
  static Expr make(double value, ScalarType type = ScalarType::F32);
};

/// An index variable (i64): a stage axis, a reduction axis, or a loop variable.
/// Variables are identified by name; lowering keeps names unique.
struct Var : ExprNode {
  KILN_DECLARE_NODE(Var)
  explicit Var(std::string n) : ExprNode(static_kind, ScalarType::I64), name(std::move(n)) {}
  const std::string name;
  static Expr make(std::string name);
};

struct Cast : ExprNode {
  KILN_DECLARE_NODE(Cast)
  Cast(Expr v, ScalarType t) : ExprNode(static_kind, t, parent_depth({&v})), value(std::move(v)) {}
  const Expr value;
  static Expr make(ScalarType type, Expr value);
};

/// Arithmetic. On integers `/` is floor division and `%` floor modulo (the
/// result takes the divisor's sign), as in Python and TVM index math.
struct Binary : ExprNode {
  KILN_DECLARE_NODE(Binary)
  Binary(BinaryOp o, Expr x, Expr y, ScalarType t)
      : ExprNode(static_kind, t, parent_depth({&x, &y})), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
  /// Promotes the operands to a common type (a literal takes the other
  /// operand's type); throws UserError on bool operands.
  static Expr make(BinaryOp op, Expr a, Expr b);
};

struct Compare : ExprNode {
  KILN_DECLARE_NODE(Compare)
  Compare(CompareOp o, Expr x, Expr y)
      : ExprNode(static_kind, ScalarType::Bool, parent_depth({&x, &y})), op(o), a(std::move(x)),
        b(std::move(y)) {}
  const CompareOp op;
  const Expr a, b;
  static Expr make(CompareOp op, Expr a, Expr b);
};

struct Logical : ExprNode {
  KILN_DECLARE_NODE(Logical)
  Logical(LogicalOp o, Expr x, Expr y)
      : ExprNode(static_kind, ScalarType::Bool, parent_depth({&x, &y})), op(o), a(std::move(x)),
        b(std::move(y)) {}
  const LogicalOp op;
  const Expr a, b;
  static Expr make(LogicalOp op, Expr a, Expr b);
};

struct Not : ExprNode {
  KILN_DECLARE_NODE(Not)
  explicit Not(Expr x)
      : ExprNode(static_kind, ScalarType::Bool, parent_depth({&x})), a(std::move(x)) {}
  const Expr a;
  static Expr make(Expr a);
};

/// `cond ? t : f`. Both branches are evaluated only in the sense of the
/// interpreter's semantics: a load in the untaken branch is never performed.
struct Select : ExprNode {
  KILN_DECLARE_NODE(Select)
  Select(Expr c, Expr x, Expr y, ScalarType t)
      : ExprNode(static_kind, t, parent_depth({&c, &x, &y})), cond(std::move(c)), t(std::move(x)),
        f(std::move(y)) {}
  const Expr cond, t, f;
  static Expr make(Expr cond, Expr t, Expr f);
};

/// A math function of floats.
struct Call : ExprNode {
  KILN_DECLARE_NODE(Call)
  Call(Intrinsic f, std::vector<Expr> a, ScalarType t)
      : ExprNode(static_kind, t, parent_depth(a)), fn(f), args(std::move(a)) {}
  const Intrinsic fn;
  const std::vector<Expr> args;
  static Expr make(Intrinsic fn, std::vector<Expr> args);
};

/// A read of one element of a tensor (in the DAG) or of a buffer (in the
/// loop nest), by one index per dimension.
struct Load : ExprNode {
  KILN_DECLARE_NODE(Load)
  Load(std::string t, std::vector<Expr> i, ScalarType ty)
      : ExprNode(static_kind, ty, parent_depth(i)), tensor(std::move(t)), indices(std::move(i)) {}
  const std::string tensor;
  const std::vector<Expr> indices;
  static Expr make(std::string tensor, std::vector<Expr> indices, ScalarType type);
};

/// A reduction over one or more axes. Only ever the whole body of a stage.
struct Reduce : ExprNode {
  KILN_DECLARE_NODE(Reduce)
  Reduce(ReduceOp o, Expr b, std::vector<IterVar> ax)
      : ExprNode(static_kind, b.type(), parent_depth({&b})), op(o), body(std::move(b)),
        axes(std::move(ax)) {}
  const ReduceOp op;
  const Expr body;
  const std::vector<IterVar> axes;
  static Expr make(ReduceOp op, Expr body, std::vector<IterVar> axes);
};

#undef KILN_DECLARE_NODE

// --- building expressions in C++ (the API a compiler backend uses) ---
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr operator==(Expr a, Expr b);
Expr operator!=(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr cond, Expr t, Expr f);
Expr cast(ScalarType type, Expr value);
Expr exp(Expr x);
Expr log(Expr x);
Expr sqrt(Expr x);
Expr erf(Expr x);
Expr tanh(Expr x);
Expr abs(Expr x);
Expr sum(Expr body, std::vector<IterVar> axes);
Expr reduce_max(Expr body, std::vector<IterVar> axes);
Expr reduce_min(Expr body, std::vector<IterVar> axes);
/// The variable that names an axis.
Expr var(const IterVar& axis);

// --- names of operators, shared by the printer, the parser and the docs ---
std::string_view binary_op_name(BinaryOp op);   ///< "+", "-", ..., "min", "max"
std::string_view compare_op_name(CompareOp op); ///< "==", "<", ...
std::string_view intrinsic_name(Intrinsic fn);  ///< "exp", "log", "sqrt", "abs", "erf", "tanh"
std::string_view reduce_op_name(ReduceOp op);   ///< "sum", "max", "min"

/// Structural equality (same tree, same names, same literals).
bool equal(const Expr& a, const Expr& b);

} // namespace kiln::ir

#endif // KILN_IR_EXPR_H
