#include "emitter.h"

#include "kiln/support/error.h"

#include <fmt/format.h>

namespace kiln::codegen {

using schedule::Buffer;

namespace {

/// Whether a vector loop's body can be emitted as vector code: no
/// allocation, no nested vector or parallel loop. An if-statement whose
/// condition differs between lanes is masked, like selects and && / ||.
class VectorizableCheck : public schedule::StmtVisitor {
public:
  bool vectorizable = true;

  using StmtVisitor::visit;

  void visit(const schedule::For* f) override {
    if (f->for_kind == schedule::ForKind::Vectorized || f->for_kind == schedule::ForKind::Parallel)
      vectorizable = false;
    if (vectorizable)
      StmtVisitor::visit(f);
  }

  void visit(const schedule::Store*) override {}

  void visit(const schedule::Allocate*) override { vectorizable = false; }
};

} // namespace

static bool vectorizable(const schedule::Stmt& body) {
  VectorizableCheck check;
  check.visit(body);
  return check.vectorizable;
}

/// Power-of-two widths, widest first, that add up to `extent`.
static std::vector<std::int64_t> vector_chunks(std::int64_t extent) {
  std::vector<std::int64_t> widths;
  for (std::int64_t w = std::int64_t{1} << 62; w > 0; w >>= 1)
    if (extent & w)
      widths.push_back(w);
  return widths;
}

void Emitter::visit(const schedule::For* f) {
  switch (f->for_kind) {
  case schedule::ForKind::Parallel:
    if (parallel_depth_ == 0 && !vector_)
      return emit_parallel(f);
    return emit_serial(f); // nested parallelism is serialised
  case schedule::ForKind::Vectorized:
    if (!vector_ && f->extent > 1 && f->extent <= 64 && vectorizable(f->body))
      return emit_vector(f);
    return emit_serial(f); // a body that needs masking runs one lane at a time
  case schedule::ForKind::Serial:
  case schedule::ForKind::Unrolled: // expanded by lowering unless too long
    return emit_serial(f);
  }
}

void Emitter::emit_serial(const schedule::For* f) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* body = llvm::BasicBlock::Create(ctx_, f->var, fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, f->var + ".exit", fn_);
  b_.CreateBr(body);
  b_.SetInsertPoint(body);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, f->var);
  iv->addIncoming(b_.getInt64(0), pre);
  vars_.push_back({f->var, iv});
  visit(f->body);
  vars_.pop_back();
  llvm::Value* next = b_.CreateAdd(iv, b_.getInt64(1), f->var + ".next", true, true);
  iv->addIncoming(next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpEQ(next, b_.getInt64(f->extent)), exit, body);
  b_.SetInsertPoint(exit);
}

void Emitter::emit_vector(const schedule::For* f) {
  std::int64_t offset = 0;
  for (std::int64_t width : vector_chunks(f->extent)) {
    if (width == 1)
      emit_single_lane(f, offset);
    else
      emit_vector_chunk(f, offset, width);
    offset += width;
  }
}

void Emitter::emit_vector_chunk(const schedule::For* f, std::int64_t offset, std::int64_t width) {
  vector_ = VectorLoop{f->var, static_cast<unsigned>(width), offset};
  visit(f->body);
  vector_.reset();
}

void Emitter::emit_single_lane(const schedule::For* f, std::int64_t lane) {
  vars_.push_back({f->var, b_.getInt64(lane)});
  visit(f->body);
  vars_.pop_back();
}

void Emitter::emit_parallel(const schedule::For* f) {
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
  auto* body_fn = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
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
  visit(f->body);
  --parallel_depth_;
  b_.CreateRetVoid();
  fn_ = saved_fn;
  entry_ = saved_entry;
  vars_ = std::move(saved_vars);
  buffers_ = std::move(saved_buffers);
  b_.SetInsertPoint(resume);
}

void Emitter::visit(const schedule::Store* s) {
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

void Emitter::emit_masked_store(llvm::Value* value, const Access& access, llvm::Align align) {
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

void Emitter::visit(const schedule::Allocate* a) {
  const Buffer& buf = a->buffer;
  if (buf.scope == schedule::BufferScope::Local) {
    // In the entry block, so that SROA and mem2reg can promote it.
    llvm::IRBuilder<> entry(entry_, entry_->begin());
    llvm::AllocaInst* alloca =
        entry.CreateAlloca(llvm_type(buf.dtype), entry.getInt64(buf.num_elements()), buf.name);
    alloca->setAlignment(llvm::Align(64));
    buffers_.push_back({buf, alloca});
    visit(a->body);
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
  visit(a->body);
  buffers_.pop_back();
  b_.CreateCall(release, {ptr});
}

void Emitter::visit(const schedule::IfThenElse* s) {
  llvm::Value* cond = emit_expr(s->cond);
  if (cond->getType()->isVectorTy())
    return emit_masked_if(s, cond);
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", fn_);
  auto* else_bb = s->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "else", fn_) : nullptr;
  auto* done = llvm::BasicBlock::Create(ctx_, "endif", fn_);
  b_.CreateCondBr(cond, then_bb, else_bb ? else_bb : done);
  b_.SetInsertPoint(then_bb);
  visit(s->then_case);
  b_.CreateBr(done);
  if (else_bb) {
    b_.SetInsertPoint(else_bb);
    visit(s->else_case);
    b_.CreateBr(done);
  }
  b_.SetInsertPoint(done);
}

void Emitter::emit_masked_if(const schedule::IfThenElse* s, llvm::Value* cond) {
  masked(cond, [&] {
    visit(s->then_case);
    return nullptr;
  });
  if (s->else_case.defined())
    masked(b_.CreateNot(cond), [&] {
      visit(s->else_case);
      return nullptr;
    });
}

} // namespace kiln::codegen
