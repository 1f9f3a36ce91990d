#include "op_counts.h"

#include "kiln/ir/expr_visitor.h"

#include <iterator>

namespace kiln::model::detail {

namespace {

class OpCounter : public ir::ExprVisitor {
public:
  explicit OpCounter(ComputeCounts& counts) : counts_(counts) {}
  using ExprVisitor::visit;

  void visit(const ir::Binary* b) override {
    const bool f = ir::is_float(b->type);
    if (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) {
      const auto* ma = b->a.as<ir::Binary>();
      const auto* mb = b->b.as<ir::Binary>();
      const ir::Binary* mul = ma && ma->op == ir::BinaryOp::Mul   ? ma
                              : mb && mb->op == ir::BinaryOp::Mul ? mb
                                                                  : nullptr;
      if (mul) {
        ++(f ? counts_.float_mad : counts_.int_mad);
        visit(mul->a);
        visit(mul->b);
        visit(mul == ma ? b->b : b->a);
        return;
      }
    }
    switch (b->op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
      ++(f ? counts_.float_addsub : counts_.int_addsub);
      break;
    case ir::BinaryOp::Mul:
      ++(f ? counts_.float_mul : counts_.int_mul);
      break;
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Mod:
      ++(f ? counts_.float_divmod : counts_.int_divmod);
      break;
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max:
      ++(f ? counts_.float_cmp : counts_.int_cmp);
      break;
    }
    ExprVisitor::visit(b);
  }
  void visit(const ir::Compare* c) override {
    ++(ir::is_float(c->a.type()) ? counts_.float_cmp : counts_.int_cmp);
    ExprVisitor::visit(c);
  }
  void visit(const ir::Logical* l) override {
    ++counts_.bool_op;
    ExprVisitor::visit(l);
  }
  void visit(const ir::Not* n) override {
    ++counts_.bool_op;
    ExprVisitor::visit(n);
  }
  void visit(const ir::Select* s) override {
    ++counts_.select;
    ExprVisitor::visit(s);
  }
  void visit(const ir::Call* c) override {
    ++(c->fn == ir::Intrinsic::Abs ? counts_.float_other : counts_.float_math);
    ExprVisitor::visit(c);
  }
  void visit(const ir::Cast* c) override {
    ++(ir::is_float(c->type) ? counts_.float_other : counts_.int_other);
    ExprVisitor::visit(c);
  }

private:
  ComputeCounts& counts_;
};

} // namespace

void count_ops(const ir::Expr& e, ComputeCounts& counts) {
  OpCounter counter(counts);
  counter.visit(e);
}

// Every field of ComputeCounts, for arithmetic over all of them.
constexpr double ComputeCounts::*kOps[] = {
    &ComputeCounts::float_mad,    &ComputeCounts::float_addsub, &ComputeCounts::float_mul,
    &ComputeCounts::float_divmod, &ComputeCounts::float_cmp,    &ComputeCounts::float_math,
    &ComputeCounts::float_other,  &ComputeCounts::int_mad,      &ComputeCounts::int_addsub,
    &ComputeCounts::int_mul,      &ComputeCounts::int_divmod,   &ComputeCounts::int_cmp,
    &ComputeCounts::int_other,    &ComputeCounts::bool_op,      &ComputeCounts::select};
static_assert(std::size(kOps) * sizeof(double) == sizeof(ComputeCounts),
              "kOps must list every field of ComputeCounts");

void add_scaled(ComputeCounts& to, const ComputeCounts& from, double k) {
  for (double ComputeCounts::*op : kOps)
    to.*op += from.*op * k;
}

double float_flops(const ComputeCounts& ops) {
  return 2 * ops.float_mad + ops.float_addsub + ops.float_mul + ops.float_divmod + ops.float_cmp +
         ops.float_math;
}

} // namespace kiln::model::detail
