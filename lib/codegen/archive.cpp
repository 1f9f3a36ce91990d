#include "kiln/codegen/archive.h"

#include "kiln/support/error.h"

#include <llvm/Object/ArchiveWriter.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>

namespace kiln::codegen {

std::vector<char> archive_bytes(const std::vector<ArchiveMember>& members) {
  std::vector<llvm::NewArchiveMember> entries;
  for (const ArchiveMember& m : members) {
    llvm::NewArchiveMember entry;
    entry.Buf = llvm::MemoryBuffer::getMemBuffer(llvm::StringRef(m.bytes.data(), m.bytes.size()),
                                                 m.name, /*RequiresNullTerminator=*/false);
    entry.MemberName = m.name;
    entries.push_back(std::move(entry));
  }
  std::string warnings;
  auto buffer = llvm::writeArchiveToBuffer(
      entries, llvm::SymtabWritingMode::NormalSymtab, llvm::object::Archive::K_GNU,
      /*Deterministic=*/true, /*Thin=*/false,
      [&](llvm::Error err) { warnings += llvm::toString(std::move(err)) + "; "; });
  // The members are kiln's own object code: one LLVM cannot read the
  // symbols of (a warning), or cannot archive, is a bug, not the user's.
  if (!buffer)
    kiln_unreachable(("cannot write an archive: " + llvm::toString(buffer.takeError())).c_str());
  KILN_ASSERT(warnings.empty(), "the archive's members have readable symbols");
  llvm::StringRef bytes = (*buffer)->getBuffer();
  return std::vector<char>(bytes.begin(), bytes.end());
}

std::vector<std::string> undefined_symbols(const std::vector<char>& object) {
  auto file = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), "kernel"));
  if (!file)
    kiln_unreachable(
        ("cannot read kiln's own object code: " + llvm::toString(file.takeError())).c_str());
  std::vector<std::string> out;
  for (const llvm::object::SymbolRef& symbol : (*file)->symbols()) {
    auto flags = symbol.getFlags();
    auto name = symbol.getName();
    if (!flags || !name)
      kiln_unreachable("cannot read a symbol of kiln's own object code");
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) && !name->empty())
      out.push_back(name->str());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool host_object_code_fits(const Target& target) {
  llvm::Triple host(llvm::sys::getProcessTriple());
  llvm::Triple want(target.triple);
  return host.getArch() == want.getArch() && host.getOS() == want.getOS() &&
         host.getEnvironment() == want.getEnvironment();
}

} // namespace kiln::codegen
