#include "kiln/schedule/stmt_visitor.h"

namespace kiln::schedule {

void StmtVisitor::visit(const Stmt& stmt) {
  if (!stmt.defined())
    return;
  switch (stmt.kind()) {
#define KILN_DISPATCH(N)                                                                           \
  case StmtKind::N:                                                                                \
    return visit(stmt.as<N>());
    KILN_FOR_EACH_STMT_NODE(KILN_DISPATCH)
#undef KILN_DISPATCH
  }
}

void StmtVisitor::visit_expr(const ir::Expr&) {}

void StmtVisitor::visit(const For* node) {
  visit(node->body);
}

void StmtVisitor::visit(const Store* node) {
  for (const ir::Expr& i : node->indices)
    visit_expr(i);
  visit_expr(node->value);
}

void StmtVisitor::visit(const Allocate* node) {
  visit(node->body);
}

void StmtVisitor::visit(const IfThenElse* node) {
  visit_expr(node->cond);
  visit(node->then_case);
  visit(node->else_case);
}

void StmtVisitor::visit(const Block* node) {
  for (const Stmt& s : node->stmts)
    visit(s);
}

Stmt StmtMutator::mutate(const Stmt& stmt) {
  if (!stmt.defined())
    return stmt;
  switch (stmt.kind()) {
#define KILN_DISPATCH(N)                                                                           \
  case StmtKind::N:                                                                                \
    return mutate(stmt.as<N>(), stmt);
    KILN_FOR_EACH_STMT_NODE(KILN_DISPATCH)
#undef KILN_DISPATCH
  }
  return stmt;
}

ir::Expr StmtMutator::mutate_expr(const ir::Expr& expr) {
  return expr;
}

Stmt StmtMutator::mutate(const For* node, const Stmt& self) {
  Stmt body = mutate(node->body);
  if (body.same_as(node->body))
    return self;
  return For::make(node->var, node->extent, node->for_kind, std::move(body));
}

Stmt StmtMutator::mutate(const Store* node, const Stmt& self) {
  std::vector<ir::Expr> indices;
  indices.reserve(node->indices.size());
  bool changed = false;
  for (const ir::Expr& i : node->indices) {
    indices.push_back(mutate_expr(i));
    changed |= !indices.back().same_as(i);
  }
  ir::Expr value = mutate_expr(node->value);
  changed |= !value.same_as(node->value);
  if (!changed)
    return self;
  return Store::make(node->buffer, std::move(indices), std::move(value));
}

Stmt StmtMutator::mutate(const Allocate* node, const Stmt& self) {
  Stmt body = mutate(node->body);
  if (body.same_as(node->body))
    return self;
  return Allocate::make(node->buffer, std::move(body));
}

Stmt StmtMutator::mutate(const IfThenElse* node, const Stmt& self) {
  ir::Expr cond = mutate_expr(node->cond);
  Stmt then_case = mutate(node->then_case);
  Stmt else_case = mutate(node->else_case);
  if (cond.same_as(node->cond) && then_case.same_as(node->then_case) &&
      else_case.same_as(node->else_case))
    return self;
  return IfThenElse::make(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt StmtMutator::mutate(const Block* node, const Stmt& self) {
  std::vector<Stmt> stmts;
  stmts.reserve(node->stmts.size());
  bool changed = false;
  for (const Stmt& s : node->stmts) {
    stmts.push_back(mutate(s));
    changed |= !stmts.back().same_as(s);
  }
  if (!changed)
    return self;
  return Block::make(std::move(stmts));
}

} // namespace kiln::schedule
