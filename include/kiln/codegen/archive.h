// Static archives of object files, and whether object code built for this
// machine also runs on a target: what `kiln export` needs of LLVM, here so
// that codegen stays the only module that includes LLVM headers.
#ifndef KILN_CODEGEN_ARCHIVE_H
#define KILN_CODEGEN_ARCHIVE_H

#include "kiln/support/target.h"

#include <string>
#include <vector>

namespace kiln::codegen {

/// One object file of an archive, by its member name ("kiln_matmul_8abae7e6.o").
struct ArchiveMember {
  std::string name;
  std::vector<char> bytes;
};

/// The bytes of a GNU static archive (`libNAME.a`) holding the objects in
/// order, with a symbol table so that a linker pulls members by symbol.
/// Deterministic: no timestamps, owners or modes of this machine.
std::vector<char> archive_bytes(const std::vector<ArchiveMember>& members);

/// The symbols an object file uses but does not define, sorted: the
/// runtime's and the libraries' functions its kernels call.
std::vector<std::string> undefined_symbols(const std::vector<char>& object);

/// Whether object code for the machine kiln runs on (built by the C
/// compiler that built kiln, say) also links into programs for `target`:
/// the same architecture, operating system and environment. Another CPU of
/// the same architecture is fine: such code uses only the baseline ISA.
bool host_object_code_fits(const Target& target);

} // namespace kiln::codegen

#endif // KILN_CODEGEN_ARCHIVE_H
