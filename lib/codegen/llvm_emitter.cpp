#include "kiln/codegen/llvm_emitter.h"

#include "partition.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"
#include "kiln/ir/printer.h"
#include "kiln/support/error.h"

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <map>
#include <optional>

namespace kiln::codegen {

using ir::Expr;
using ir::ExprKind;
using ir::ScalarType;
using schedule::Buffer;
using schedule::Stmt;
using schedule::StmtKind;

std::string packed_symbol(const std::string& kernel_name) {
  return kernel_name + "_packed";
}

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

static bool may_trap(const Expr& e) {
  MayTrap m;
  m.visit(e);
  return m.result;
}

class Emitter {
public:
  Emitter(llvm::Module& module, const Target& target)
      : module_(module), ctx_(module.getContext()), target_(target), b_(ctx_) {}

  void emit(const schedule::LoweredFunc& func) {
    std::vector<llvm::Type*> params(func.args.size(), b_.getPtrTy());
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
    fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, func.name, module_);
    set_target_attributes(fn_);
    // The packed wrapper calls the typed entry point; keeping it out of line
    // means the optimiser works on the kernel body once.
    fn_->addFnAttr(llvm::Attribute::NoInline);
    for (size_t i = 0; i < func.args.size(); ++i) {
      llvm::Argument* arg = fn_->getArg(static_cast<unsigned>(i));
      const Buffer& buf = func.args[i];
      arg->setName(buf.name);
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttr(llvm::Attribute::NoCapture);
      arg->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
      arg->addAttr(llvm::Attribute::getWithDereferenceableBytes(
          ctx_, static_cast<std::uint64_t>(buf.size_bytes())));
      buffers_.push_back({buf, arg});
    }
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry_);
    emit_stmt(func.body);
    b_.CreateRetVoid();
    emit_packed_wrapper(func);
  }

private:
  struct BoundBuffer {
    Buffer buffer;
    llvm::Value* base;
  };

  enum class AccessKind { Uniform, Contiguous, Strided };
  struct Access {
    AccessKind kind;
    llvm::Value* ptr; ///< element pointer (Uniform, Contiguous) or vector of pointers
  };

  void set_target_attributes(llvm::Function* f) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr("target-cpu", target_.cpu);
    f->addFnAttr("target-features", target_.features);
    if (target_.vector_bits > 0) // see vector_width_bits in target.cpp
      f->addFnAttr("prefer-vector-width", std::to_string(target_.vector_bits));
  }

  void emit_packed_wrapper(const schedule::LoweredFunc& func) {
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
    auto* wrapper = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                           packed_symbol(func.name), module_);
    set_target_attributes(wrapper);
    llvm::Argument* args = wrapper->getArg(0);
    args->setName("args");
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", wrapper));
    std::vector<llvm::Value*> ptrs;
    for (size_t i = 0; i < func.args.size(); ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), args, i);
      ptrs.push_back(b_.CreateAlignedLoad(b_.getPtrTy(), slot, llvm::Align(8), func.args[i].name));
    }
    b_.CreateCall(fn_, ptrs);
    b_.CreateRetVoid();
  }

  llvm::Type* llvm_type(ScalarType t) {
    switch (t) {
    case ScalarType::Bool:
      return b_.getInt1Ty();
    case ScalarType::I32:
      return b_.getInt32Ty();
    case ScalarType::I64:
      return b_.getInt64Ty();
    case ScalarType::F32:
      return b_.getFloatTy();
    case ScalarType::F64:
      return b_.getDoubleTy();
    }
    kiln_unreachable("unknown scalar type");
  }

  // --- statements ---

  void emit_stmt(const Stmt& s) {
    switch (s.kind()) {
    case StmtKind::For:
      return emit_for(s.as<schedule::For>());
    case StmtKind::Store:
      return emit_store(s.as<schedule::Store>());
    case StmtKind::Allocate:
      return emit_allocate(s.as<schedule::Allocate>());
    case StmtKind::IfThenElse:
      return emit_if(s.as<schedule::IfThenElse>());
    case StmtKind::Block:
      for (const Stmt& child : s.as<schedule::Block>()->stmts)
        emit_stmt(child);
      return;
    }
  }

  void emit_for(const schedule::For* f) {
    switch (f->for_kind) {
    case schedule::ForKind::Parallel:
      if (parallel_depth_ == 0 && !vector_)
        return emit_parallel(f);
      return emit_serial(f); // nested parallelism is serialised
    case schedule::ForKind::Vectorized:
      if (!vector_ && f->extent > 1 && f->extent <= 64 && vectorizable(f->body, f->var))
        return emit_vector(f);
      return emit_serial(f); // a body that needs masking runs one lane at a time
    case schedule::ForKind::Serial:
    case schedule::ForKind::Unrolled: // expanded by lowering unless too long
      return emit_serial(f);
    }
  }

  /// A bottom-tested loop: every extent is at least 1.
  void emit_serial(const schedule::For* f) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* body = llvm::BasicBlock::Create(ctx_, f->var, fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, f->var + ".exit", fn_);
    b_.CreateBr(body);
    b_.SetInsertPoint(body);
    llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, f->var);
    iv->addIncoming(b_.getInt64(0), pre);
    vars_.push_back({f->var, iv});
    emit_stmt(f->body);
    vars_.pop_back();
    llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), f->var + ".next", true, true);
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpEQ(next, b_.getInt64(f->extent)), exit, body);
    b_.SetInsertPoint(exit);
  }

  /// The loop becomes vector code: its variable is the lane number, every
  /// value that depends on it a vector. An extent that is not a power of two
  /// runs as chunks of power-of-two widths (56 = 32 + 16 + 8): type
  /// legalisation would scalarise a `<56 x float>` whole.
  void emit_vector(const schedule::For* f) {
    std::int64_t offset = 0;
    for (std::int64_t width : vector_chunks(f->extent)) {
      if (width == 1)
        emit_single_lane(f, offset);
      else
        emit_vector_chunk(f, offset, width);
      offset += width;
    }
  }

  /// Power-of-two widths, widest first, that add up to `extent`.
  static std::vector<std::int64_t> vector_chunks(std::int64_t extent) {
    std::vector<std::int64_t> widths;
    for (std::int64_t w = std::int64_t{1} << 62; w > 0; w >>= 1)
      if (extent & w)
        widths.push_back(w);
    return widths;
  }

  void emit_vector_chunk(const schedule::For* f, std::int64_t offset, std::int64_t width) {
    vector_ = VectorLoop{f->var, static_cast<unsigned>(width), offset};
    emit_stmt(f->body);
    vector_.reset();
  }

  /// A one-lane remainder is scalar code with the variable a constant.
  void emit_single_lane(const schedule::For* f, std::int64_t lane) {
    vars_.push_back({f->var, b_.getInt64(lane)});
    emit_stmt(f->body);
    vars_.pop_back();
  }

  /// The body of a parallel loop is outlined into `task(index, closure)`,
  /// which the runtime's thread pool calls for every index. The closure holds
  /// the variables and buffers in scope; the task passes them on to a body
  /// function whose pointer parameters are noalias again, and which is
  /// inlined into the task so the optimiser keeps that knowledge.
  void emit_parallel(const schedule::For* f) {
    std::string base = fmt::format("{}.par{}", fn_->getName().str(), parallel_count_++);
    std::vector<llvm::Type*> fields;
    for (size_t i = 0; i < vars_.size(); ++i)
      fields.push_back(b_.getInt64Ty());
    for (size_t i = 0; i < buffers_.size(); ++i)
      fields.push_back(b_.getPtrTy());
    auto* closure_type = llvm::StructType::get(ctx_, fields);

    // The body: (index, vars..., buffers...) with noalias buffer pointers.
    std::vector<llvm::Type*> params{b_.getInt64Ty()};
    params.insert(params.end(), fields.begin(), fields.end());
    auto* body_fn =
        llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                               llvm::Function::InternalLinkage, base + ".body", module_);
    set_target_attributes(body_fn);
    body_fn->addFnAttr(llvm::Attribute::AlwaysInline);
    for (size_t i = 0; i < buffers_.size(); ++i) {
      llvm::Argument* arg = body_fn->getArg(static_cast<unsigned>(1 + vars_.size() + i));
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
      arg->setName(buffers_[i].buffer.name);
    }

    // The task: unpack the closure, call the body.
    auto* task_fn = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), {b_.getInt64Ty(), b_.getPtrTy()}, false),
        llvm::Function::InternalLinkage, base, module_);
    set_target_attributes(task_fn);
    {
      llvm::IRBuilder<> tb(llvm::BasicBlock::Create(ctx_, "entry", task_fn));
      std::vector<llvm::Value*> args{task_fn->getArg(0)};
      for (size_t i = 0; i < fields.size(); ++i) {
        llvm::Value* slot = tb.CreateStructGEP(closure_type, task_fn->getArg(1), i);
        args.push_back(tb.CreateLoad(fields[i], slot));
      }
      tb.CreateCall(body_fn, args);
      tb.CreateRetVoid();
    }

    // Here: fill the closure, hand the loop to the runtime.
    llvm::IRBuilder<> entry(entry_, entry_->begin());
    llvm::AllocaInst* closure = entry.CreateAlloca(closure_type, nullptr, base + ".closure");
    for (size_t i = 0; i < fields.size(); ++i) {
      llvm::Value* v = i < vars_.size() ? vars_[i].second : buffers_[i - vars_.size()].base;
      b_.CreateStore(v, b_.CreateStructGEP(closure_type, closure, i));
    }
    llvm::FunctionCallee parallel_for = module_.getOrInsertFunction(
        "kiln_rt_parallel_for",
        llvm::FunctionType::get(b_.getVoidTy(), {b_.getInt64Ty(), b_.getPtrTy(), b_.getPtrTy()},
                                false));
    b_.CreateCall(parallel_for, {b_.getInt64(f->extent), task_fn, closure});
    llvm::BasicBlock* resume = b_.GetInsertBlock();

    // Emit the body function with its own scope.
    auto saved_vars = std::move(vars_);
    auto saved_buffers = std::move(buffers_);
    llvm::Function* saved_fn = fn_;
    llvm::BasicBlock* saved_entry = entry_;
    fn_ = body_fn;
    entry_ = llvm::BasicBlock::Create(ctx_, "entry", body_fn);
    b_.SetInsertPoint(entry_);
    vars_.clear();
    buffers_.clear();
    for (size_t i = 0; i < saved_vars.size(); ++i)
      vars_.push_back({saved_vars[i].first, body_fn->getArg(static_cast<unsigned>(1 + i))});
    for (size_t i = 0; i < saved_buffers.size(); ++i)
      buffers_.push_back({saved_buffers[i].buffer,
                          body_fn->getArg(static_cast<unsigned>(1 + saved_vars.size() + i))});
    vars_.push_back({f->var, body_fn->getArg(0)});
    ++parallel_depth_;
    emit_stmt(f->body);
    --parallel_depth_;
    b_.CreateRetVoid();
    fn_ = saved_fn;
    entry_ = saved_entry;
    vars_ = std::move(saved_vars);
    buffers_ = std::move(saved_buffers);
    b_.SetInsertPoint(resume);
  }

  void emit_store(const schedule::Store* s) {
    const BoundBuffer& buf = lookup_buffer(s->buffer);
    llvm::Value* value = emit_expr(s->value);
    llvm::Align align(ir::bytes(buf.buffer.dtype));
    if (!vector_) {
      b_.CreateAlignedStore(value, element_ptr(buf, s->indices), align);
      return;
    }
    Access access = analyze_access(buf, s->indices);
    value = widen(value);
    if (mask_)
      return emit_masked_store(value, access, align);
    switch (access.kind) {
    case AccessKind::Uniform:
      // Every lane writes the same element: the last lane's value wins.
      b_.CreateAlignedStore(b_.CreateExtractElement(value, vector_->lanes - 1), access.ptr, align);
      return;
    case AccessKind::Contiguous:
      b_.CreateAlignedStore(value, access.ptr, align);
      return;
    case AccessKind::Strided:
      b_.CreateMaskedScatter(value, access.ptr, align);
      return;
    }
  }

  /// A store in a vector loop under a lane-dependent guard: only the active
  /// lanes write.
  void emit_masked_store(llvm::Value* value, const Access& access, llvm::Align align) {
    switch (access.kind) {
    case AccessKind::Uniform:
      // A scatter writes its lanes in order: the last active lane wins, as
      // the last lane does in an unmasked uniform store.
      b_.CreateMaskedScatter(value, b_.CreateVectorSplat(vector_->lanes, access.ptr), align, mask_);
      return;
    case AccessKind::Contiguous:
      b_.CreateMaskedStore(value, access.ptr, align, mask_);
      return;
    case AccessKind::Strided:
      b_.CreateMaskedScatter(value, access.ptr, align, mask_);
      return;
    }
  }

  void emit_allocate(const schedule::Allocate* a) {
    const Buffer& buf = a->buffer;
    if (buf.scope == schedule::BufferScope::Local) {
      // In the entry block, so that SROA and mem2reg can promote it.
      llvm::IRBuilder<> entry(entry_, entry_->begin());
      llvm::AllocaInst* alloca =
          entry.CreateAlloca(llvm_type(buf.dtype), entry.getInt64(buf.num_elements()), buf.name);
      alloca->setAlignment(llvm::Align(64));
      buffers_.push_back({buf, alloca});
      emit_stmt(a->body);
      buffers_.pop_back();
      return;
    }
    llvm::FunctionCallee alloc = module_.getOrInsertFunction(
        "kiln_rt_alloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
    llvm::FunctionCallee release = module_.getOrInsertFunction(
        "kiln_rt_free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
    llvm::CallInst* ptr = b_.CreateCall(alloc, {b_.getInt64(buf.size_bytes())}, buf.name);
    ptr->addRetAttr(llvm::Attribute::NoAlias);
    ptr->addRetAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
    buffers_.push_back({buf, ptr});
    emit_stmt(a->body);
    buffers_.pop_back();
    b_.CreateCall(release, {ptr});
  }

  void emit_if(const schedule::IfThenElse* s) {
    llvm::Value* cond = emit_expr(s->cond);
    if (cond->getType()->isVectorTy())
      return emit_masked_if(s, cond);
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", fn_);
    auto* else_bb = s->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
    auto* done = llvm::BasicBlock::Create(ctx_, "endif", fn_);
    b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
    b_.SetInsertPoint(then_bb);
    emit_stmt(s->then_case);
    b_.CreateBr(done);
    if (else_bb) {
      b_.SetInsertPoint(else_bb);
      emit_stmt(s->else_case);
      b_.CreateBr(done);
    }
    b_.SetInsertPoint(done);
  }

  /// An if whose condition differs between lanes (the guard of a split tail
  /// inside a vector loop): both sides run, each masked to its lanes, so
  /// the loop stays vector code.
  void emit_masked_if(const schedule::IfThenElse* s, llvm::Value* cond) {
    masked(cond, [&] {
      emit_stmt(s->then_case);
      return nullptr;
    });
    if (s->else_case.defined())
      masked(b_.CreateNot(cond), [&] {
        emit_stmt(s->else_case);
        return nullptr;
      });
  }

  const BoundBuffer& lookup_buffer(const std::string& name) {
    for (size_t i = buffers_.size(); i-- > 0;)
      if (buffers_[i].buffer.name == name)
        return buffers_[i];
    kiln_unreachable(("no buffer named " + name + " in scope").c_str());
  }

  /// Address of one element (scalar code).
  llvm::Value* element_ptr(const BoundBuffer& buf, const std::vector<Expr>& indices) {
    KILN_ASSERT(indices.size() == buf.buffer.shape.size(), "index count matches buffer rank");
    return gep(llvm_type(buf.buffer.dtype), buf.base, flat_offset(buf, indices));
  }

  // --- expressions ---

  llvm::Value* emit_expr(const Expr& e) {
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

  llvm::Value* lookup_var(const std::string& name) {
    if (vector_ && name == vector_->var)
      return lane_numbers(b_.getInt64Ty());
    for (size_t i = vars_.size(); i-- > 0;)
      if (vars_[i].first == name)
        return vars_[i].second;
    kiln_unreachable(("unbound loop variable " + name).c_str());
  }

  llvm::Value* emit_cast(const ir::Cast* c) {
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

  /// `x * y + z` as one fused multiply-add (float Add of a Mul).
  llvm::Value* emit_fma(const ir::Binary* op) {
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

  static bool is_float_mul(const Expr& e) {
    const auto* b = e.as<ir::Binary>();
    return b && b->op == ir::BinaryOp::Mul && ir::is_float(b->type);
  }

  llvm::Value* emit_binary(const ir::Binary* op) {
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
      return fp ? b_.CreateFDiv(a, b) : floor_div(a, b);
    case ir::BinaryOp::Mod:
      return fp ? b_.CreateFRem(a, b) : floor_mod(a, b);
    case ir::BinaryOp::Min:
      return fp ? b_.CreateMinNum(a, b) : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, b);
    case ir::BinaryOp::Max:
      return fp ? b_.CreateMaxNum(a, b) : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, b);
    }
    kiln_unreachable("unknown binary op");
  }

  /// Division rounding toward negative infinity.
  llvm::Value* floor_div(llvm::Value* a, llvm::Value* b) {
    b = safe_divisor(b);
    llvm::Value* q = b_.CreateSDiv(a, b);
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
    // q - 1 when the remainder is non-zero and its sign differs from b's.
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
    return b_.CreateSub(q, b_.CreateZExt(adjust, a->getType()));
  }

  /// Remainder with the sign of the divisor.
  llvm::Value* floor_mod(llvm::Value* a, llvm::Value* b) {
    b = safe_divisor(b);
    llvm::Value* r = b_.CreateSRem(a, b);
    llvm::Value* zero = llvm::ConstantInt::get(a->getType(), 0);
    llvm::Value* adjust =
        b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
    return b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
  }

  llvm::Value* emit_compare(const ir::Compare* c) {
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

  /// Evaluates `then_value` or `else_value` under a branch, joined by a phi;
  /// used when an operand may trap and must not run when not taken.
  template <typename Then, typename Else>
  llvm::Value* branch(llvm::Value* cond, Then then_value, Else else_value, llvm::Type* type) {
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

  llvm::Value* emit_logical(const ir::Logical* l) {
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

  llvm::Value* emit_select(const ir::Select* s) {
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
    return branch(
        cond, [&] { return emit_expr(s->t); }, [&] { return emit_expr(s->f); }, llvm_type(s->type));
  }

  llvm::Value* emit_call(const ir::Call* c) {
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
    }
    return b_.CreateUnaryIntrinsic(id, x);
  }

  // --- vector code ---

  struct VectorLoop {
    std::string var;
    unsigned lanes;
    std::int64_t first = 0; ///< the loop variable's value in lane 0 (a chunk's start)
  };

  /// <first, first+1, …, first+lanes-1> of an integer type.
  llvm::Value* lane_numbers(llvm::Type* type) {
    std::vector<llvm::Constant*> lanes;
    for (unsigned i = 0; i < vector_->lanes; ++i)
      lanes.push_back(llvm::ConstantInt::get(type, vector_->first + i));
    return llvm::ConstantVector::get(lanes);
  }

  /// A scalar broadcast to every lane (vectors pass through).
  llvm::Value* widen(llvm::Value* v) {
    if (!vector_ || v->getType()->isVectorTy())
      return v;
    return b_.CreateVectorSplat(vector_->lanes, v);
  }

  /// Makes two operands both scalars or both vectors.
  void match_lanes(llvm::Value*& a, llvm::Value*& b) {
    if (a->getType()->isVectorTy() != b->getType()->isVectorTy()) {
      a = widen(a);
      b = widen(b);
    }
  }

  /// `scalar` as a vector type when `like_value` is a vector.
  llvm::Type* like(llvm::Value* like_value, llvm::Type* scalar) {
    if (auto* vt = llvm::dyn_cast<llvm::VectorType>(like_value->getType()))
      return llvm::VectorType::get(scalar, vt->getElementCount());
    return scalar;
  }

  /// How the lanes of a vector loop touch a buffer: all the same element,
  /// consecutive elements, or anything else (gather / scatter). Each index is
  /// split into `coefficient × lane + rest`; a non-affine rest that does not
  /// involve the lane (the `f % 4 * 256` of a fused loop) is the same in
  /// every lane and does not force a gather.
  Access analyze_access(const BoundBuffer& buf, const std::vector<Expr>& indices) {
    std::int64_t stride = 0, row = 1;
    bool affine = true;
    for (size_t d = indices.size(); d-- > 0;) {
      auto form = ir::linearize_with_atoms(indices[d]);
      if (!form || form->atoms_use(vector_->var))
        affine = affine && !ir::uses_var(indices[d], vector_->var);
      else
        stride += form->linear.coeff(vector_->var) * row;
      row *= buf.buffer.shape[d];
    }
    llvm::Type* elem = llvm_type(buf.buffer.dtype);
    if (!affine) {
      llvm::Value* offsets = widen(flat_offset(buf, indices));
      return {AccessKind::Strided, gep(elem, buf.base, offsets)};
    }
    // The address of lane 0, with the lane variable at its first value and
    // scalar code.
    const std::int64_t first_lane = vector_->first;
    auto saved = vector_;
    vars_.push_back({saved->var, b_.getInt64(first_lane)});
    vector_.reset();
    llvm::Value* first = element_ptr(buf, indices);
    vector_ = saved;
    vars_.pop_back();
    if (stride == 0)
      return {AccessKind::Uniform, first};
    if (stride == 1)
      return {AccessKind::Contiguous, first};
    // Offsets from lane 0's element: lane × stride (lanes counted from the
    // chunk's start, not from the loop's).
    std::vector<llvm::Constant*> steps;
    for (unsigned i = 0; i < vector_->lanes; ++i)
      steps.push_back(b_.getInt64(static_cast<std::int64_t>(i) * stride));
    return {AccessKind::Strided, gep(elem, first, llvm::ConstantVector::get(steps))};
  }

  llvm::Value* emit_load(const ir::Load* l) {
    const BoundBuffer& buf = lookup_buffer(l->tensor);
    llvm::Type* elem = llvm_type(l->type);
    llvm::Align align(ir::bytes(l->type));
    if (!vector_)
      return b_.CreateAlignedLoad(elem, element_ptr(buf, l->indices), align);
    Access access = analyze_access(buf, l->indices);
    auto* vec = llvm::FixedVectorType::get(elem, vector_->lanes);
    if (mask_) {
      // Only the active lanes may touch memory.
      llvm::Value* none = llvm::Constant::getNullValue(vec);
      switch (access.kind) {
      case AccessKind::Uniform:
        return b_.CreateMaskedGather(vec, b_.CreateVectorSplat(vector_->lanes, access.ptr), align,
                                     mask_, none);
      case AccessKind::Contiguous:
        return b_.CreateMaskedLoad(vec, access.ptr, align, mask_, none);
      case AccessKind::Strided:
        return b_.CreateMaskedGather(vec, access.ptr, align, mask_, none);
      }
    }
    switch (access.kind) {
    case AccessKind::Uniform:
      return b_.CreateAlignedLoad(elem, access.ptr, align);
    case AccessKind::Contiguous:
      return b_.CreateAlignedLoad(vec, access.ptr, align);
    case AccessKind::Strided:
      return b_.CreateMaskedGather(vec, access.ptr, align);
    }
    kiln_unreachable("unknown access kind");
  }

  /// Whether a vector loop's body can be emitted as vector code: no
  /// allocation, no nested vector or parallel loop. An if-statement whose
  /// condition differs between lanes is masked, like selects and && / ||.
  bool vectorizable(const Stmt& s, const std::string& var) {
    switch (s.kind()) {
    case StmtKind::For: {
      const auto* f = s.as<schedule::For>();
      return f->for_kind != schedule::ForKind::Vectorized &&
             f->for_kind != schedule::ForKind::Parallel && vectorizable(f->body, var);
    }
    case StmtKind::Store:
      return true;
    case StmtKind::Allocate:
      return false;
    case StmtKind::IfThenElse: {
      const auto* i = s.as<schedule::IfThenElse>();
      return vectorizable(i->then_case, var) &&
             (!i->else_case.defined() || vectorizable(i->else_case, var));
    }
    case StmtKind::Block:
      for (const Stmt& c : s.as<schedule::Block>()->stmts)
        if (!vectorizable(c, var))
          return false;
      return true;
    }
    return false;
  }

  /// Runs `emit` with only the lanes of `lanes` (and of any enclosing mask)
  /// active: loads in it become masked loads or gathers, stores masked
  /// stores or scatters.
  template <typename Emit> llvm::Value* masked(llvm::Value* lanes, Emit emit) {
    llvm::Value* saved = mask_;
    mask_ = saved ? b_.CreateAnd(saved, lanes) : lanes;
    llvm::Value* v = emit();
    mask_ = saved;
    return v;
  }

  /// A divisor that cannot fault in inactive lanes (they divide by 1).
  llvm::Value* safe_divisor(llvm::Value* d) {
    // A divisor the same in every lane divides as scalar code would; the
    // operands of a vector one were already made vectors alike.
    if (!mask_ || !vector_ || !d->getType()->isVectorTy())
      return d;
    return b_.CreateSelect(mask_, d, llvm::ConstantInt::get(d->getType(), 1));
  }

  /// An element address; not `inbounds` under a mask, where inactive lanes
  /// may compute addresses outside the buffer.
  llvm::Value* gep(llvm::Type* elem, llvm::Value* base, llvm::Value* offset) {
    return mask_ ? b_.CreateGEP(elem, base, offset) : b_.CreateInBoundsGEP(elem, base, offset);
  }

  /// Flat row-major offset of an element as an i64 value (Horner form).
  llvm::Value* flat_offset(const BoundBuffer& buf, const std::vector<Expr>& indices) {
    llvm::Value* offset = nullptr;
    for (size_t d = 0; d < indices.size(); ++d) {
      llvm::Value* idx = emit_expr(indices[d]);
      if (!offset) {
        offset = idx;
        continue;
      }
      llvm::Value* scale =
          llvm::ConstantInt::get(idx->getType()->isVectorTy() || offset->getType()->isVectorTy()
                                     ? like(widen(offset), b_.getInt64Ty())
                                     : b_.getInt64Ty(),
                                 buf.buffer.shape[d]);
      llvm::Value* o = offset;
      match_lanes(o, idx);
      offset = b_.CreateAdd(b_.CreateMul(o, scale, "", false, true), idx, "", false, true);
    }
    return offset ? offset : b_.getInt64(0);
  }

  llvm::Module& module_;
  llvm::LLVMContext& ctx_;
  const Target& target_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;
  std::vector<std::pair<std::string, llvm::Value*>> vars_;
  std::vector<BoundBuffer> buffers_;
  std::optional<VectorLoop> vector_;
  llvm::Value* mask_ = nullptr; ///< active lanes (masked select side or if), or null
  int parallel_depth_ = 0;
  int parallel_count_ = 0;
};

} // namespace

std::unique_ptr<llvm::Module> emit_llvm_module(const schedule::LoweredFunc& func,
                                               const Target& target, llvm::LLVMContext& context,
                                               const llvm::DataLayout& layout) {
  auto module = std::make_unique<llvm::Module>(func.name, context);
  module->setTargetTriple(target.triple);
  module->setDataLayout(layout);
  // Split tails are partitioned first so that vector loops keep unguarded
  // main parts (docs/benchmarks.md, "Limitations found" 3).
  schedule::LoweredFunc partitioned = func;
  partitioned.body = partition_tails(func.body);
  Emitter(*module, target).emit(partitioned);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    kiln_unreachable(("generated LLVM IR does not verify: " + os.str()).c_str());
  return module;
}

} // namespace kiln::codegen
