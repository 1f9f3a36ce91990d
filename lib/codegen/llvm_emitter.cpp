#include "kiln/codegen/llvm_emitter.h"

#include "emitter.h"
#include "partition.h"

#include "kiln/support/error.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace kiln::codegen {

using ir::ScalarType;
using schedule::Buffer;

std::string packed_symbol(const std::string& kernel_name) {
  return kernel_name + "_packed";
}

std::string prepack_symbol(const std::string& kernel_name) {
  return kernel_name + "_prepack";
}

void Emitter::emit(const schedule::LoweredFunc& func) {
  llvm::Function* kernel = emit_function(func.name, func.args, func.body);
  emit_packed_wrapper(kernel, packed_symbol(func.name), func.args);
  if (func.has_prepack()) {
    std::string name = prepack_symbol(func.name);
    llvm::Function* prepack = emit_function(name, func.args, func.prepack);
    emit_packed_wrapper(prepack, packed_symbol(name), func.args);
  }
}

llvm::Function* Emitter::emit_function(const std::string& name,
                                       const std::vector<schedule::Buffer>& args,
                                       const schedule::Stmt& body) {
  std::vector<llvm::Type*> params(args.size(), b_.getPtrTy());
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module_);
  set_target_attributes(fn_);
  // The packed wrapper calls the typed entry point; keeping it out of line
  // means the optimiser works on the kernel body once.
  fn_->addFnAttr(llvm::Attribute::NoInline);
  buffers_.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Argument* arg = fn_->getArg(static_cast<unsigned>(i));
    const Buffer& buf = args[i];
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
  visit(body);
  b_.CreateRetVoid();
  return fn_;
}

void Emitter::set_target_attributes(llvm::Function* f) {
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->addFnAttr("target-cpu", target_.cpu);
  f->addFnAttr("target-features", target_.features);
  if (target_.vector_bits > 0) // see vector_width_bits in target.cpp
    f->addFnAttr("prefer-vector-width", std::to_string(target_.vector_bits));
}

void Emitter::emit_packed_wrapper(llvm::Function* fn, const std::string& symbol,
                                  const std::vector<schedule::Buffer>& args) {
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false);
  auto* wrapper = llvm::Function::Create(type, llvm::Function::ExternalLinkage, symbol, module_);
  set_target_attributes(wrapper);
  llvm::Argument* array = wrapper->getArg(0);
  array->setName("args");
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", wrapper));
  std::vector<llvm::Value*> ptrs;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), array, i);
    ptrs.push_back(b_.CreateAlignedLoad(b_.getPtrTy(), slot, llvm::Align(8), args[i].name));
  }
  b_.CreateCall(fn, ptrs);
  b_.CreateRetVoid();
}

llvm::Type* Emitter::llvm_type(ScalarType t) {
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

std::unique_ptr<llvm::Module> emit_llvm_module(const schedule::LoweredFunc& func,
                                               const Target& target, llvm::LLVMContext& context,
                                               const llvm::DataLayout& layout) {
  auto module = std::make_unique<llvm::Module>(func.name, context);
  module->setTargetTriple(target.triple);
  module->setDataLayout(layout);
  // Split tails are partitioned first so that vector loops keep unguarded
  // main parts: a guard inside a vector loop turns its loads into masked
  // or scalar ones.
  schedule::LoweredFunc partitioned = func;
  partitioned.body = partition_tails(func.body);
  if (func.has_prepack())
    partitioned.prepack = partition_tails(func.prepack);
  Emitter(*module, target).emit(partitioned);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    kiln_unreachable(("generated LLVM IR does not verify: " + os.str()).c_str());
  return module;
}

} // namespace kiln::codegen
