#include "kiln/schedule/loop_nest.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/printer.h"
#include "kiln/schedule/stmt_visitor.h"
#include "kiln/support/error.h"

#include <fmt/format.h>

namespace kiln::schedule {

std::int64_t Buffer::num_elements() const {
  std::int64_t n = 1;
  for (std::int64_t e : shape)
    n *= e;
  return n;
}

std::int64_t Buffer::size_bytes() const {
  return num_elements() * ir::bytes(dtype);
}

Stmt For::make(std::string var, std::int64_t extent, ForKind kind, Stmt body) {
  KILN_ASSERT(extent > 0, "loops have positive extents");
  KILN_ASSERT(body.defined(), "loop body undefined");
  return Stmt(std::make_shared<For>(std::move(var), extent, kind, std::move(body)));
}

Stmt Store::make(std::string buffer, std::vector<ir::Expr> indices, ir::Expr value) {
  KILN_ASSERT(value.defined(), "store of an undefined value");
  return Stmt(std::make_shared<Store>(std::move(buffer), std::move(indices), std::move(value)));
}

Stmt Allocate::make(Buffer buffer, Stmt body) {
  return Stmt(std::make_shared<Allocate>(std::move(buffer), std::move(body)));
}

Stmt IfThenElse::make(ir::Expr cond, Stmt then_case, Stmt else_case) {
  KILN_ASSERT(cond.type() == ir::ScalarType::Bool, "if needs a condition");
  return Stmt(
      std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt& s : stmts) {
    if (!s.defined())
      continue;
    if (const auto* b = s.as<Block>())
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  if (flat.size() == 1)
    return flat[0];
  return Stmt(std::make_shared<Block>(std::move(flat)));
}

namespace {

/// Applies one function to every expression of a nest.
class ExprMapper : public StmtMutator {
public:
  explicit ExprMapper(const std::function<ir::Expr(const ir::Expr&)>& fn) : fn_(fn) {}

protected:
  ir::Expr mutate_expr(const ir::Expr& expr) override { return fn_(expr); }

private:
  const std::function<ir::Expr(const ir::Expr&)>& fn_;
};

} // namespace

Stmt map_exprs(const Stmt& stmt, const std::function<ir::Expr(const ir::Expr&)>& fn) {
  return ExprMapper(fn).mutate(stmt);
}

Stmt substitute(const Stmt& stmt,
                const std::vector<std::pair<std::string, ir::Expr>>& replacements) {
  return map_exprs(stmt, [&](const ir::Expr& e) { return ir::substitute(e, replacements); });
}

std::string_view for_kind_name(ForKind kind) {
  switch (kind) {
  case ForKind::Serial:
    return "for";
  case ForKind::Parallel:
    return "parallel for";
  case ForKind::Vectorized:
    return "vectorized for";
  case ForKind::Unrolled:
    return "unrolled for";
  }
  return "?";
}

static std::string_view scope_name(BufferScope s) {
  switch (s) {
  case BufferScope::Argument:
    return "argument";
  case BufferScope::Global:
    return "heap";
  case BufferScope::Local:
    return "local";
  case BufferScope::Packed:
    return "packed";
  }
  return "?";
}

static std::string buffer_decl(const Buffer& b) {
  std::string shape;
  for (size_t i = 0; i < b.shape.size(); ++i)
    shape += fmt::format("{}{}", i ? ", " : "", b.shape[i]);
  return fmt::format("{}: {}[{}]", b.name, ir::type_name(b.dtype), shape);
}

static std::string indices_text(const std::vector<ir::Expr>& indices) {
  std::string s;
  for (size_t i = 0; i < indices.size(); ++i)
    s += (i ? ", " : "") + ir::to_string(indices[i]);
  return s;
}

namespace {

/// The pseudo-code of a nest, two spaces per level.
class Printer : public StmtVisitor {
public:
  explicit Printer(int indent) : indent_(indent) {}
  std::string out;

  using StmtVisitor::visit;

  void visit(const For* f) override {
    out += fmt::format("{}{} {} in 0..{}:\n", pad(), for_kind_name(f->for_kind), f->var, f->extent);
    nested(f->body);
  }

  void visit(const Store* s) override {
    out += fmt::format("{}{}[{}] = {}\n", pad(), s->buffer, indices_text(s->indices),
                       ir::to_string(s->value));
  }

  void visit(const Allocate* a) override {
    out += fmt::format("{}allocate {} ({})\n", pad(), buffer_decl(a->buffer),
                       scope_name(a->buffer.scope));
    visit(a->body);
  }

  void visit(const IfThenElse* i) override {
    out += fmt::format("{}if {}:\n", pad(), ir::to_string(i->cond));
    nested(i->then_case);
    if (!i->else_case.defined())
      return;
    out += fmt::format("{}else:\n", pad());
    nested(i->else_case);
  }

private:
  std::string pad() const { return std::string(indent_ * 2, ' '); }

  void nested(const Stmt& body) {
    ++indent_;
    visit(body);
    --indent_;
  }

  int indent_;
};

} // namespace

std::string to_string(const Stmt& stmt, int indent) {
  Printer printer(indent);
  printer.visit(stmt);
  return std::move(printer.out);
}

std::string to_string(const LoweredFunc& func) {
  std::string args;
  for (size_t i = 0; i < func.args.size(); ++i) {
    const Buffer& b = func.args[i];
    args += (i ? ", " : "") + buffer_decl(b);
    if (b.scope == BufferScope::Packed)
      args += " (packed)";
  }
  std::string prepack;
  if (func.has_prepack())
    prepack = fmt::format("prepack {}({}) {{\n{}}}\n", func.name, args, to_string(func.prepack, 1));
  return prepack + fmt::format("func {}({}) {{\n{}}}\n", func.name, args, to_string(func.body, 1));
}

} // namespace kiln::schedule
