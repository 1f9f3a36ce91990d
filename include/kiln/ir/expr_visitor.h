// Walking (ExprVisitor) and rewriting (ExprMutator) expressions, separate as
// in Halide. Both are generated from KILN_FOR_EACH_EXPR_NODE.
#ifndef KILN_IR_EXPR_VISITOR_H
#define KILN_IR_EXPR_VISITOR_H

#include "kiln/ir/expr.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kiln::ir {

/// Reads an expression tree. The default visit of each node visits its
/// children; override the nodes of interest and call the base to recurse.
class ExprVisitor {
public:
  virtual ~ExprVisitor() = default;
  void visit(const Expr& e);

#define KILN_VISIT(N) virtual void visit(const N* node);
  KILN_FOR_EACH_EXPR_NODE(KILN_VISIT)
#undef KILN_VISIT
};

/// Rewrites an expression tree bottom-up. The default mutate of each node
/// mutates its children and rebuilds the node only if one of them changed.
class ExprMutator {
public:
  virtual ~ExprMutator() = default;
  Expr mutate(const Expr& e);

protected:
#define KILN_MUTATE(N) virtual Expr mutate(const N* node, const Expr& self);
  KILN_FOR_EACH_EXPR_NODE(KILN_MUTATE)
#undef KILN_MUTATE
};

/// Whether an expression reads variable `var`.
bool uses_var(const Expr& e, const std::string& var);
/// Whether an expression reads any of `vars`.
bool uses_any_var(const Expr& e, const std::set<std::string>& vars);

/// Replaces variables by name.
Expr substitute(const Expr& e, const std::vector<std::pair<std::string, Expr>>& replacements);

} // namespace kiln::ir

#endif // KILN_IR_EXPR_VISITOR_H
