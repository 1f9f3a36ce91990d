// Filling in the Target (kiln/support/target.h) through LLVM: the host this
// process runs on (CPU name, features, vector register width from the
// target's cost model, cores and caches), or a named machine for emitting
// object code for another CPU.
#ifndef KILN_CODEGEN_TARGET_H
#define KILN_CODEGEN_TARGET_H

#include "kiln/support/error.h"
#include "kiln/support/target.h"

#include <string>

namespace kiln::codegen {

/// The machine this process runs on.
Target host_target();

/// A named machine (`--target x86_64-linux-gnu --mcpu znver4`): features
/// and vector width come from LLVM's model of that CPU; cores and caches
/// are copied from the host. An unknown triple or CPU is an Error.
Expected<Target> named_target(const std::string& triple, const std::string& cpu);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_TARGET_H
