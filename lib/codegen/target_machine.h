// Private to codegen: LLVM objects for a kiln Target.
#ifndef KILN_LIB_CODEGEN_TARGET_MACHINE_H
#define KILN_LIB_CODEGEN_TARGET_MACHINE_H

#include "kiln/codegen/target.h"

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <vector>

namespace kiln::codegen {

/// Registers LLVM's targets once per process.
void initialize_llvm_targets();

/// A TargetMachine for `target` at -O3 with position-independent code.
Expected<std::unique_ptr<llvm::TargetMachine>> create_target_machine(const Target& target);

/// The module as an object or assembly file for the machine's target.
Expected<std::vector<char>> emit_file(llvm::Module& module, llvm::TargetMachine& machine,
                                      llvm::CodeGenFileType type);

} // namespace kiln::codegen

#endif
