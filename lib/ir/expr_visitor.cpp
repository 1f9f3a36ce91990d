#include "kiln/ir/expr_visitor.h"

#include <map>

namespace kiln::ir {

void ExprVisitor::visit(const Expr& e) {
  switch (e.kind()) {
#define KILN_DISPATCH(N)                                                                           \
  case ExprKind::N:                                                                                \
    return visit(e.as<N>());
    KILN_FOR_EACH_EXPR_NODE(KILN_DISPATCH)
#undef KILN_DISPATCH
  }
}

void ExprVisitor::visit(const IntImm*) {}
void ExprVisitor::visit(const FloatImm*) {}
void ExprVisitor::visit(const Var*) {}
void ExprVisitor::visit(const Cast* n) {
  visit(n->value);
}
void ExprVisitor::visit(const Binary* n) {
  visit(n->a);
  visit(n->b);
}
void ExprVisitor::visit(const Compare* n) {
  visit(n->a);
  visit(n->b);
}
void ExprVisitor::visit(const Logical* n) {
  visit(n->a);
  visit(n->b);
}
void ExprVisitor::visit(const Not* n) {
  visit(n->a);
}
void ExprVisitor::visit(const Select* n) {
  visit(n->cond);
  visit(n->t);
  visit(n->f);
}
void ExprVisitor::visit(const Call* n) {
  for (const Expr& a : n->args)
    visit(a);
}
void ExprVisitor::visit(const Load* n) {
  for (const Expr& i : n->indices)
    visit(i);
}
void ExprVisitor::visit(const Reduce* n) {
  visit(n->body);
}

Expr ExprMutator::mutate(const Expr& e) {
  switch (e.kind()) {
#define KILN_DISPATCH(N)                                                                           \
  case ExprKind::N:                                                                                \
    return mutate(e.as<N>(), e);
    KILN_FOR_EACH_EXPR_NODE(KILN_DISPATCH)
#undef KILN_DISPATCH
  }
  return e;
}

Expr ExprMutator::mutate(const IntImm*, const Expr& self) {
  return self;
}
Expr ExprMutator::mutate(const FloatImm*, const Expr& self) {
  return self;
}
Expr ExprMutator::mutate(const Var*, const Expr& self) {
  return self;
}

Expr ExprMutator::mutate(const Cast* n, const Expr& self) {
  Expr v = mutate(n->value);
  return v.same_as(n->value) ? self : Cast::make(n->type, v);
}

Expr ExprMutator::mutate(const Binary* n, const Expr& self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  return a.same_as(n->a) && b.same_as(n->b) ? self : Binary::make(n->op, a, b);
}

Expr ExprMutator::mutate(const Compare* n, const Expr& self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  return a.same_as(n->a) && b.same_as(n->b) ? self : Compare::make(n->op, a, b);
}

Expr ExprMutator::mutate(const Logical* n, const Expr& self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  return a.same_as(n->a) && b.same_as(n->b) ? self : Logical::make(n->op, a, b);
}

Expr ExprMutator::mutate(const Not* n, const Expr& self) {
  Expr a = mutate(n->a);
  return a.same_as(n->a) ? self : Not::make(a);
}

Expr ExprMutator::mutate(const Select* n, const Expr& self) {
  Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
  return c.same_as(n->cond) && t.same_as(n->t) && f.same_as(n->f) ? self : Select::make(c, t, f);
}

Expr ExprMutator::mutate(const Call* n, const Expr& self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const Expr& a : n->args) {
    args.push_back(mutate(a));
    changed |= !args.back().same_as(a);
  }
  if (!changed)
    return self;
  return Call::make(n->fn, std::move(args));
}

Expr ExprMutator::mutate(const Load* n, const Expr& self) {
  std::vector<Expr> indices;
  bool changed = false;
  for (const Expr& i : n->indices) {
    indices.push_back(mutate(i));
    changed |= !indices.back().same_as(i);
  }
  if (!changed)
    return self;
  return Load::make(n->tensor, std::move(indices), n->type);
}

Expr ExprMutator::mutate(const Reduce* n, const Expr& self) {
  Expr body = mutate(n->body);
  return body.same_as(n->body) ? self : Reduce::make(n->op, body, n->axes);
}

namespace {
class Substituter : public ExprMutator {
public:
  explicit Substituter(const std::vector<std::pair<std::string, Expr>>& r) {
    for (const auto& [name, e] : r)
      map_.emplace(name, e);
  }
  using ExprMutator::mutate;

protected:
  Expr mutate(const Var* n, const Expr& self) override {
    auto it = map_.find(n->name);
    return it == map_.end() ? self : it->second;
  }

private:
  std::map<std::string, Expr, std::less<>> map_;
};
} // namespace

bool uses_var(const Expr& e, const std::string& var) {
  class Uses : public ExprVisitor {
  public:
    explicit Uses(const std::string& v) : name(v) {}
    const std::string& name;
    bool found = false;
    using ExprVisitor::visit;
    void visit(const Var* v) override { found |= v->name == name; }
  } u(var);
  u.visit(e);
  return u.found;
}

bool uses_any_var(const Expr& e, const std::set<std::string>& vars) {
  class Uses : public ExprVisitor {
  public:
    explicit Uses(const std::set<std::string>& v) : vars(v) {}
    const std::set<std::string>& vars;
    bool found = false;
    using ExprVisitor::visit;
    void visit(const Var* v) override { found |= vars.count(v->name) > 0; }
  } u(vars);
  u.visit(e);
  return u.found;
}

Expr substitute(const Expr& e, const std::vector<std::pair<std::string, Expr>>& replacements) {
  if (replacements.empty())
    return e;
  Substituter s(replacements);
  return s.mutate(e);
}

} // namespace kiln::ir
