#include "kiln/schedule/loop_nest.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/printer.h"
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

Stmt map_exprs(const Stmt& stmt, const std::function<ir::Expr(const ir::Expr&)>& fn) {
  if (!stmt.defined())
    return stmt;
  switch (stmt.kind()) {
  case StmtKind::For: {
    const auto* f = stmt.as<For>();
    Stmt body = map_exprs(f->body, fn);
    return body.same_as(f->body) ? stmt : For::make(f->var, f->extent, f->for_kind, body);
  }
  case StmtKind::Store: {
    const auto* s = stmt.as<Store>();
    std::vector<ir::Expr> indices;
    bool changed = false;
    for (const ir::Expr& i : s->indices) {
      indices.push_back(fn(i));
      changed |= !indices.back().same_as(i);
    }
    ir::Expr value = fn(s->value);
    changed |= !value.same_as(s->value);
    return changed ? Store::make(s->buffer, std::move(indices), value) : stmt;
  }
  case StmtKind::Allocate: {
    const auto* a = stmt.as<Allocate>();
    Stmt body = map_exprs(a->body, fn);
    return body.same_as(a->body) ? stmt : Allocate::make(a->buffer, body);
  }
  case StmtKind::IfThenElse: {
    const auto* i = stmt.as<IfThenElse>();
    ir::Expr cond = fn(i->cond);
    Stmt t = map_exprs(i->then_case, fn), e = map_exprs(i->else_case, fn);
    if (cond.same_as(i->cond) && t.same_as(i->then_case) && e.same_as(i->else_case))
      return stmt;
    return IfThenElse::make(cond, t, e);
  }
  case StmtKind::Block: {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const Stmt& s : stmt.as<Block>()->stmts) {
      stmts.push_back(map_exprs(s, fn));
      changed |= !stmts.back().same_as(s);
    }
    return changed ? Block::make(std::move(stmts)) : stmt;
  }
  }
  return stmt;
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

std::string to_string(const Stmt& stmt, int indent) {
  std::string pad(indent * 2, ' ');
  if (!stmt.defined())
    return "";
  switch (stmt.kind()) {
  case StmtKind::For: {
    const auto* f = stmt.as<For>();
    return fmt::format("{}{} {} in 0..{}:\n{}", pad, for_kind_name(f->for_kind), f->var, f->extent,
                       to_string(f->body, indent + 1));
  }
  case StmtKind::Store: {
    const auto* s = stmt.as<Store>();
    return fmt::format("{}{}[{}] = {}\n", pad, s->buffer, indices_text(s->indices),
                       ir::to_string(s->value));
  }
  case StmtKind::Allocate: {
    const auto* a = stmt.as<Allocate>();
    return fmt::format("{}allocate {} ({})\n{}", pad, buffer_decl(a->buffer),
                       scope_name(a->buffer.scope), to_string(a->body, indent));
  }
  case StmtKind::IfThenElse: {
    const auto* i = stmt.as<IfThenElse>();
    std::string out = fmt::format("{}if {}:\n{}", pad, ir::to_string(i->cond),
                                  to_string(i->then_case, indent + 1));
    if (i->else_case.defined())
      out += fmt::format("{}else:\n{}", pad, to_string(i->else_case, indent + 1));
    return out;
  }
  case StmtKind::Block: {
    std::string out;
    for (const Stmt& s : stmt.as<Block>()->stmts)
      out += to_string(s, indent);
    return out;
  }
  }
  return "";
}

std::string to_string(const LoweredFunc& func) {
  std::string args;
  for (size_t i = 0; i < func.args.size(); ++i)
    args += (i ? ", " : "") + buffer_decl(func.args[i]);
  return fmt::format("func {}({}) {{\n{}}}\n", func.name, args, to_string(func.body, 1));
}

} // namespace kiln::schedule
