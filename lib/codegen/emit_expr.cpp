#include "emitter.h"
#include "vector_math.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/support/error.h"

#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>

namespace kiln::codegen {

using ir::Expr;
using ir::ExprKind;
using ir::ScalarType;

namespace {

/// True when evaluating `e` can fault: it loads memory or divides integers.
/// Such operands of select / && / || are evaluated only when taken.
class MayTrap : public ir::ExprVisitor {
public:
  bool result = false;
  using ExprVisitor::visit;
  void visit(const ir::Load*) override { result = true; }
  void visit(const ir::Binary* b) override {
    if (!ir::is_float(b->type) && (b->op == ir::BinaryOp::Div || b->op == ir::BinaryOp::Mod))
      result = true;
    ExprVisitor::visit(b);
  }
};

} // namespace

static bool may_trap(const Expr& e) {
  MayTrap m;
  m.visit(e);
  return m.result;
}

llvm::Value* Emitter::emit_expr(const Expr& e) {
  switch (e.kind()) {
  case ExprKind::IntImm:
    return llvm::ConstantInt::get(llvm_type(e.type()), e.as<ir::IntImm>()->value, true);
  case ExprKind::FloatImm:
    return llvm::ConstantFP::get(llvm_type(e.type()), e.as<ir::FloatImm>()->value);
  case ExprKind::Var:
    return lookup_var(e.as<ir::Var>()->name);
  case ExprKind::Cast:
    return emit_cast(e.as<ir::Cast>());
  case ExprKind::Binary:
    return emit_binary(e.as<ir::Binary>());
  case ExprKind::Compare:
    return emit_compare(e.as<ir::Compare>());
  case ExprKind::Logical:
    return emit_logical(e.as<ir::Logical>());
  case ExprKind::Not:
    return b_.CreateNot(emit_expr(e.as<ir::Not>()->a));
  case ExprKind::Select:
    return emit_select(e.as<ir::Select>());
  case ExprKind::Call:
    return emit_call(e.as<ir::Call>());
  case ExprKind::Load:
    return emit_load(e.as<ir::Load>());
  case ExprKind::Reduce:
    kiln_unreachable("reductions are lowered to loops before codegen");
  }
  kiln_unreachable("unknown expression kind");
}

llvm::Value* Emitter::lookup_var(const std::string& name) {
  if (vector_ && name == vector_->var)
    return lane_numbers(b_.getInt64Ty());
  for (size_t i = vars_.size(); i-- > 0;)
    if (vars_[i].first == name)
      return vars_[i].second;
  kiln_unreachable(("unbound loop variable " + name).c_str());
}

llvm::Value* Emitter::emit_cast(const ir::Cast* c) {
  llvm::Value* v = emit_expr(c->value);
  ScalarType from = c->value.type(), to = c->type;
  llvm::Type* t = like(v, llvm_type(to));
  if (to == ScalarType::Bool)
    return ir::is_float(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                              : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  if (from == ScalarType::Bool)
    return ir::is_float(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
  if (ir::is_float(from) && ir::is_float(to))
    return b_.CreateFPCast(v, t);
  if (ir::is_float(from))
    return b_.CreateFPToSI(v, t);
  if (ir::is_float(to))
    return b_.CreateSIToFP(v, t);
  return b_.CreateSExtOrTrunc(v, t);
}

llvm::Value* Emitter::emit_fma(const ir::Binary* op) {
  const Expr& mul_side = is_float_mul(op->a) ? op->a : op->b;
  const Expr& other = is_float_mul(op->a) ? op->b : op->a;
  const auto* mul = mul_side.as<ir::Binary>();
  llvm::Value* x = emit_expr(mul->a);
  llvm::Value* y = emit_expr(mul->b);
  llvm::Value* z = emit_expr(other);
  if (x->getType()->isVectorTy() || y->getType()->isVectorTy() || z->getType()->isVectorTy()) {
    x = widen(x);
    y = widen(y);
    z = widen(z);
  }
  return b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, y, z});
}

bool Emitter::is_float_mul(const Expr& e) {
  const auto* b = e.as<ir::Binary>();
  return b && b->op == ir::BinaryOp::Mul && ir::is_float(b->type);
}

llvm::Value* Emitter::emit_binary(const ir::Binary* op) {
  bool fp = ir::is_float(op->type);
  if (fp && op->op == ir::BinaryOp::Add && (is_float_mul(op->a) || is_float_mul(op->b)))
    return emit_fma(op);
  llvm::Value* a = emit_expr(op->a);
  llvm::Value* b = emit_expr(op->b);
  match_lanes(a, b);
  // Index arithmetic (i64) never wraps; tensor integers (i32) may.
  bool nsw = op->type == ScalarType::I64;
  switch (op->op) {
  case ir::BinaryOp::Add:
    return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b, "", false, nsw);
  case ir::BinaryOp::Sub:
    return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b, "", false, nsw);
  case ir::BinaryOp::Mul:
    return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b, "", false, nsw);
  case ir::BinaryOp::Div:
    return fp ? b_.CreateFDiv(a, b) : emit_floor_div(a, b);
  case ir::BinaryOp::Mod:
    return fp ? b_.CreateFRem(a, b) : emit_floor_mod(a, b);
  case ir::BinaryOp::Min:
    return fp ? b_.CreateMinNum(a, b) : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
  case ir::BinaryOp::Max:
    return fp ? b_.CreateMaxNum(a, b) : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
  }
  kiln_unreachable("unknown binary op");
}

llvm::Value* Emitter::emit_floor_div(llvm::Value* a, llvm::Value* b) {
  b = safe_divisor(b);
  llvm::Value* q = b_.CreateSDiv(a, b);
  llvm::Value* r = b_.CreateSRem(a, b);
  llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  // q - 1 when the remainder is non-zero and its sign differs from b's.
  llvm::Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
}

llvm::Value* Emitter::emit_floor_mod(llvm::Value* a, llvm::Value* b) {
  b = safe_divisor(b);
  llvm::Value* r = b_.CreateSRem(a, b);
  llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
  llvm::Value* adjust =
      b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
  return b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
}

llvm::Value* Emitter::emit_compare(const ir::Compare* c) {
  llvm::Value* a = emit_expr(c->a);
  llvm::Value* b = emit_expr(c->b);
  match_lanes(a, b);
  bool fp = ir::is_float(c->a.type());
  switch (c->op) {
  case ir::CompareOp::EQ:
    return fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
  case ir::CompareOp::NE:
    return fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
  case ir::CompareOp::LT:
    return fp ? b_.CreateFCmpOLT(a, b) : b_.CreateICmpSLT(a, b);
  case ir::CompareOp::LE:
    return fp ? b_.CreateFCmpOLE(a, b) : b_.CreateICmpSLE(a, b);
  case ir::CompareOp::GT:
    return fp ? b_.CreateFCmpOGT(a, b) : b_.CreateICmpSGT(a, b);
  case ir::CompareOp::GE:
    return fp ? b_.CreateFCmpOGE(a, b) : b_.CreateICmpSGE(a, b);
  }
  kiln_unreachable("unknown compare op");
}

template <typename Then, typename Else>
llvm::Value* Emitter::branch(llvm::Value* cond, Then then_value, Else else_value,
                             llvm::Type* type) {
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "sel.then", fn_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "sel.else", fn_);
  auto* done = llvm::BasicBlock::Create(ctx_, "sel.end", fn_);
  b_.CreateCondBr(cond, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  llvm::Value* t = then_value();
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  llvm::BranchInst* then_br = b_.CreateBr(done);
  b_.SetInsertPoint(else_bb);
  llvm::Value* f = else_value();
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  llvm::BranchInst* else_br = b_.CreateBr(done);
  // In a vector loop one side may be a vector and the other a scalar:
  // broadcast the scalar at the end of its own block. When both are
  // scalars (a condition the same for every lane, around scalar values),
  // the result stays a scalar: it may be a branch condition.
  if (t->getType()->isVectorTy() != f->getType()->isVectorTy()) {
    b_.SetInsertPoint(then_br);
    t = widen(t);
    b_.SetInsertPoint(else_br);
    f = widen(f);
  }
  b_.SetInsertPoint(done);
  llvm::PHINode* phi = b_.CreatePHI(t->getType()->isVectorTy() ? t->getType() : type, 2);
  phi->addIncoming(t, then_end);
  phi->addIncoming(f, else_end);
  return phi;
}

llvm::Value* Emitter::emit_logical(const ir::Logical* l) {
  llvm::Value* a = emit_expr(l->a);
  bool is_and = l->op == ir::LogicalOp::And;
  if (!may_trap(l->b)) {
    llvm::Value* b = emit_expr(l->b);
    match_lanes(a, b);
    return is_and ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
  }
  if (a->getType()->isVectorTy()) {
    // Lanes differ: evaluate the right side only in the lanes that need it.
    llvm::Value* needed = is_and ? a : b_.CreateNot(a);
    llvm::Value* b = widen(masked(needed, [&] { return emit_expr(l->b); }));
    return is_and ? b_.CreateAnd(a, b) : b_.CreateOr(a, b);
  }
  auto rhs = [&] { return emit_expr(l->b); };
  auto constant = [&] { return static_cast<llvm::Value*>(b_.getInt1(!is_and)); };
  return is_and ? branch(a, rhs, constant, b_.getInt1Ty())
                : branch(a, constant, rhs, b_.getInt1Ty());
}

/// A literal 0 (not -0.0, which a block of zero bytes is not).
static bool is_positive_zero(const Expr& e) {
  if (const auto* f = e.as<ir::FloatImm>())
    return f->value == 0.0 && !std::signbit(f->value);
  if (const auto* i = e.as<ir::IntImm>())
    return i->value == 0;
  return false;
}

llvm::Value* Emitter::emit_select(const ir::Select* s) {
  llvm::Value* cond = emit_expr(s->cond);
  if (!may_trap(s->t) && !may_trap(s->f)) {
    llvm::Value* t = emit_expr(s->t);
    llvm::Value* f = emit_expr(s->f);
    match_lanes(t, f);
    if (cond->getType()->isVectorTy()) {
      t = widen(t);
      f = widen(f);
    }
    return b_.CreateSelect(cond, t, f);
  }
  if (cond->getType()->isVectorTy()) {
    // Lanes differ: each side runs masked to the lanes that take it, so a
    // load on the other side (padding, say) never touches memory.
    llvm::Value* t = widen(masked(cond, [&] { return emit_expr(s->t); }));
    llvm::Value* f = widen(masked(b_.CreateNot(cond), [&] { return emit_expr(s->f); }));
    return b_.CreateSelect(cond, t, f);
  }
  // A load or a zero, the same choice in every lane (a row of padding): the
  // load reads a block of zeros when the condition fails. A branch would
  // split the loop body into blocks, and a register tile's accumulators
  // would go through memory across them.
  if (const auto* load = s->t.as<ir::Load>(); load && is_positive_zero(s->f))
    if (llvm::Value* v = emit_load(load, cond))
      return v;
  return branch(
      cond, [&] { return emit_expr(s->t); }, [&] { return emit_expr(s->f); }, llvm_type(s->type));
}

llvm::Value* Emitter::emit_call(const ir::Call* c) {
  llvm::Value* x = emit_expr(c->args[0]);
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  switch (c->fn) {
  case ir::Intrinsic::Exp:
    id = llvm::Intrinsic::exp;
    break;
  case ir::Intrinsic::Log:
    id = llvm::Intrinsic::log;
    break;
  case ir::Intrinsic::Sqrt:
    id = llvm::Intrinsic::sqrt;
    break;
  case ir::Intrinsic::Abs:
    id = llvm::Intrinsic::fabs;
    break;
  case ir::Intrinsic::Erf:
  case ir::Intrinsic::Tanh:
    break; // no LLVM intrinsic: libm's function, or libmvec's for a vector
  }
  if (auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType()))
    if (llvm::Value* v = emit_libmvec_call(c->fn, x, vector))
      return v;
  if (id == llvm::Intrinsic::not_intrinsic)
    return emit_libm_call(c->fn, x);
  return b_.CreateUnaryIntrinsic(id, x);
}

llvm::Value* Emitter::emit_libm_call(ir::Intrinsic fn, llvm::Value* x) {
  llvm::Type* element = x->getType()->getScalarType();
  std::string name(ir::intrinsic_name(fn));
  if (element->isFloatTy())
    name += 'f';
  llvm::FunctionCallee callee =
      module_.getOrInsertFunction(name, llvm::FunctionType::get(element, {element}, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
  }
  auto* vector = llvm::dyn_cast<llvm::FixedVectorType>(x->getType());
  if (!vector)
    return b_.CreateCall(callee, {x});
  // A target without vector variants: one call per lane.
  llvm::Value* out = llvm::PoisonValue::get(vector);
  for (unsigned lane = 0; lane < vector->getNumElements(); ++lane)
    out = b_.CreateInsertElement(out, b_.CreateCall(callee, {b_.CreateExtractElement(x, lane)}),
                                 lane);
  return out;
}

llvm::Value* Emitter::emit_libmvec_call(ir::Intrinsic fn, llvm::Value* x,
                                        llvm::FixedVectorType* type) {
  const bool f64 = type->getElementType()->isDoubleTy();
  if (!f64 && !type->getElementType()->isFloatTy())
    return nullptr;
  const unsigned lanes = type->getNumElements();
  // The widest variant whose width divides the lanes (kiln's vectors are
  // powers of two, and at least as wide as the narrowest variant when they
  // come from a vector loop).
  for (const VectorVariant& variant : libmvec_variants(target_, fn, f64)) {
    if (lanes % variant.lanes != 0)
      continue;
    auto* part_type = llvm::FixedVectorType::get(type->getElementType(), variant.lanes);
    llvm::FunctionCallee callee = module_.getOrInsertFunction(
        variant.symbol, llvm::FunctionType::get(part_type, {part_type}, false));
    if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
      f->setDoesNotThrow();
      f->setDoesNotAccessMemory();
    }
    std::vector<llvm::Value*> parts;
    for (unsigned first = 0; first < lanes; first += variant.lanes) {
      llvm::Value* part = x;
      if (variant.lanes != lanes) {
        llvm::SmallVector<int, 16> mask;
        for (unsigned i = 0; i < variant.lanes; ++i)
          mask.push_back(static_cast<int>(first + i));
        part = b_.CreateShuffleVector(x, mask);
      }
      parts.push_back(b_.CreateCall(callee, {part}));
    }
    return parts.size() == 1 ? parts.front() : llvm::concatenateVectors(b_, parts);
  }
  return nullptr;
}

} // namespace kiln::codegen
