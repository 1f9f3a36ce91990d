// Private to codegen: LLVM objects for a kiln Target.
#ifndef KILN_LIB_CODEGEN_TARGET_MACHINE_H
#define KILN_LIB_CODEGEN_TARGET_MACHINE_H

#include "kiln/codegen/target.h"

#include <llvm/Target/TargetMachine.h>

#include <memory>

namespace kiln::codegen {

/// Registers LLVM's targets once per process.
void initialize_llvm_targets();

/// A TargetMachine for `target` at -O3 with position-independent code.
Expected<std::unique_ptr<llvm::TargetMachine>> create_target_machine(const Target& target);

} // namespace kiln::codegen

#endif
