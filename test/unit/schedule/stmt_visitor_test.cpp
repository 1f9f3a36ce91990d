#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/printer.h"
#include "kiln/schedule/stmt_visitor.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace kiln;
using schedule::Stmt;

namespace {

/// allocate t { for i in 0..4 { t[i] = 1; if i < 2: t[i] = t[i] + 1 }; out[0] = t[3] }
Stmt sample_nest() {
  using namespace schedule;
  ir::Expr i = ir::Var::make("i");
  Stmt first = Store::make("t", {i}, ir::Expr(1.0));
  Stmt guarded = IfThenElse::make(
      i < ir::Expr(2),
      Store::make("t", {i}, ir::Load::make("t", {i}, ir::ScalarType::F32) + ir::Expr(1.0)));
  Stmt loop = For::make("i", 4, ForKind::Serial, Block::make({first, guarded}));
  Buffer t{"t", ir::ScalarType::F32, {4}, BufferScope::Local};
  Stmt other = Store::make("out", {ir::Expr(0)}, ir::Load::make("t", {ir::Expr(3)}, t.dtype));
  return Block::make({Allocate::make(t, Block::make({loop, other}))});
}

/// Records the statements and expressions it meets, in order.
class Recorder : public schedule::StmtVisitor {
public:
  std::vector<std::string> seen;
  using StmtVisitor::visit;
  void visit(const schedule::For* f) override {
    seen.push_back("for " + f->var);
    StmtVisitor::visit(f);
  }
  void visit(const schedule::Store* s) override {
    seen.push_back("store " + s->buffer);
    StmtVisitor::visit(s);
  }
  void visit(const schedule::IfThenElse* i) override {
    seen.push_back("if");
    StmtVisitor::visit(i);
  }

protected:
  void visit_expr(const ir::Expr& e) override { seen.push_back("expr " + ir::to_string(e)); }
};

/// Renames the stores of buffer "out".
class Renamer : public schedule::StmtMutator {
public:
  using StmtMutator::mutate;

protected:
  Stmt mutate(const schedule::Store* s, const Stmt& self) override {
    if (s->buffer != "out")
      return StmtMutator::mutate(s, self);
    return schedule::Store::make("result", s->indices, s->value);
  }
};

/// Replaces variable i by i + 10 in every expression.
class ShiftI : public schedule::StmtMutator {
protected:
  ir::Expr mutate_expr(const ir::Expr& e) override {
    return ir::substitute(e, {{"i", ir::Var::make("i") + ir::Expr(10)}});
  }
};

} // namespace

TEST_CASE("StmtVisitor visits statements in order and hands their expressions to a hook",
          "[schedule][visitor]") {
  Recorder r;
  r.visit(sample_nest());
  std::vector<std::string> expected = {
      "for i",   "store t", "expr i",          "expr 1.0",  "if",     "expr i < 2",
      "store t", "expr i",  "expr t[i] + 1.0", "store out", "expr 0", "expr t[3]",
  };
  CHECK(r.seen == expected);

  Recorder none;
  none.visit(Stmt());
  CHECK(none.seen.empty());
}

TEST_CASE("StmtMutator rebuilds only what changed", "[schedule][visitor]") {
  Stmt nest = sample_nest();

  // Nothing to change: the very same node comes back.
  schedule::StmtMutator identity;
  CHECK(identity.mutate(nest).same_as(nest));
  CHECK(!identity.mutate(Stmt()).defined());

  // One store changes: its ancestors are rebuilt, its siblings are shared.
  Stmt renamed = Renamer().mutate(nest);
  REQUIRE(!renamed.same_as(nest));
  const auto* old_alloc = nest.as<schedule::Allocate>();
  const auto* new_alloc = renamed.as<schedule::Allocate>();
  REQUIRE(old_alloc);
  REQUIRE(new_alloc);
  const auto* old_block = old_alloc->body.as<schedule::Block>();
  const auto* new_block = new_alloc->body.as<schedule::Block>();
  REQUIRE(old_block);
  REQUIRE(new_block);
  CHECK(new_block->stmts[0].same_as(old_block->stmts[0]));
  CHECK(!new_block->stmts[1].same_as(old_block->stmts[1]));
  CHECK(new_block->stmts[1].as<schedule::Store>()->buffer == "result");

  // The expression hook reaches indices, values and conditions.
  std::string shifted = schedule::to_string(ShiftI().mutate(nest));
  CHECK(shifted == "allocate t: f32[4] (local)\n"
                   "for i in 0..4:\n"
                   "  t[i + 10] = 1.0\n"
                   "  if i + 10 < 2:\n"
                   "    t[i + 10] = t[i + 10] + 1.0\n"
                   "out[0] = t[3]\n");
}
