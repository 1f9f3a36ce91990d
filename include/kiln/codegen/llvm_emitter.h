// Loop nest → LLVM IR.
//
// The entry point of a kernel is a C function with one pointer per tensor,
// inputs then outputs, in the order of ComputeDAG::arguments():
//
//   void kiln_<op>(const float* A, const float* B, float* C);
//
// Every pointer must be 64-byte aligned and must not alias another (they are
// marked `noalias align 64`; kiln's own buffers are allocated that way). A
// second symbol, `kiln_<op>_packed(void** args)`, takes the same pointers in
// an array, so that callers need not know the arity. When the kernel reads
// buffers packed ahead from constant inputs (Packed arguments, after the
// outputs), `kiln_<op>_prepack` with the same arguments fills them.
#ifndef KILN_CODEGEN_LLVM_EMITTER_H
#define KILN_CODEGEN_LLVM_EMITTER_H

#include "kiln/codegen/target.h"
#include "kiln/schedule/loop_nest.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <string>

namespace kiln::codegen {

/// The packed wrapper's symbol for a kernel name.
std::string packed_symbol(const std::string& kernel_name);
/// The prepack function's symbol for a kernel name (its wrapper is
/// packed_symbol of it).
std::string prepack_symbol(const std::string& kernel_name);

/// Builds and verifies the module of one lowered function.
std::unique_ptr<llvm::Module> emit_llvm_module(const schedule::LoweredFunc& func,
                                               const Target& target, llvm::LLVMContext& context,
                                               const llvm::DataLayout& layout);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_LLVM_EMITTER_H
