// Walking (StmtVisitor) and rewriting (StmtMutator) loop nests, separate as
// in Halide's IRVisitor and IRMutator, and generated like them from the node
// list (KILN_FOR_EACH_STMT_NODE in loop_nest.h): adding a statement kind
// adds a virtual to both, so every pass that walks statements gets its
// default behaviour. Expressions inside statements are reached through one
// hook each (visit_expr, mutate_expr); walking inside them is the business
// of ir::ExprVisitor and ir::ExprMutator.
#ifndef KILN_SCHEDULE_STMT_VISITOR_H
#define KILN_SCHEDULE_STMT_VISITOR_H

#include "kiln/schedule/loop_nest.h"

namespace kiln::schedule {

/// Reads a loop nest. The default visit of each node passes its expressions
/// to visit_expr (store indices then value, an if's condition) and visits
/// its child statements in order; override the nodes of interest and call
/// the base to recurse.
class StmtVisitor {
public:
  virtual ~StmtVisitor() = default;
  /// Dispatches on the kind; an undefined statement (a missing else) is
  /// skipped.
  void visit(const Stmt& stmt);

#define KILN_STMT_VISIT(N) virtual void visit(const N* node);
  KILN_FOR_EACH_STMT_NODE(KILN_STMT_VISIT)
#undef KILN_STMT_VISIT

protected:
  /// Called for every expression of a statement; does nothing by default.
  virtual void visit_expr(const ir::Expr& expr);
};

/// Rewrites a loop nest bottom-up. The default mutate of each node mutates
/// its expressions with mutate_expr and its child statements, and rebuilds
/// the node only when one of them changed (same_as): an unchanged subtree
/// comes back as the same node.
class StmtMutator {
public:
  virtual ~StmtMutator() = default;
  /// Dispatches on the kind; an undefined statement stays undefined.
  Stmt mutate(const Stmt& stmt);

protected:
#define KILN_STMT_MUTATE(N) virtual Stmt mutate(const N* node, const Stmt& self);
  KILN_FOR_EACH_STMT_NODE(KILN_STMT_MUTATE)
#undef KILN_STMT_MUTATE

  /// Called for every expression of a statement (store indices and value,
  /// an if's condition); returns it unchanged by default.
  virtual ir::Expr mutate_expr(const ir::Expr& expr);
};

} // namespace kiln::schedule

#endif // KILN_SCHEDULE_STMT_VISITOR_H
