#include "kiln/codegen/jit.h"

#include "target_machine.h"

#include "kiln/codegen/runtime.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>

namespace kiln::codegen {

struct Jit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int next_id = 0;
};

static Error jit_error(const char* what, llvm::Error err) {
  return Error("jit-error", fmt::format("{}: {}", what, llvm::toString(std::move(err))));
}

Jit::Jit(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Jit::~Jit() = default;

Expected<std::unique_ptr<Jit>> Jit::create() {
  initialize_llvm_targets();
  // Vector math (vector_math.h) links against glibc's libmvec, which the
  // process itself may not have loaded; the JIT resolves kernels' calls
  // among the process's libraries. Where it is missing, kernels that call it
  // fail to load with the symbol named.
  static const bool libmvec_loaded =
      !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  (void)libmvec_loaded;
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit)
    return jit_error("cannot start the JIT", jit.takeError());
  // The runtime is linked by address: the tool need not export its symbols.
  llvm::orc::SymbolMap symbols;
  for (const auto& [name, address] : runtime_symbols())
    symbols[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                              llvm::JITSymbolFlags::Exported |
                                                  llvm::JITSymbolFlags::Callable};
  if (auto err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(symbols)))
    return jit_error("cannot define the runtime symbols", std::move(err));
  auto impl = std::make_unique<Impl>();
  impl->jit = std::move(*jit);
  return std::unique_ptr<Jit>(new Jit(std::move(impl)));
}

Expected<std::unique_ptr<LoadedKernel>> Jit::load(const ObjectCode& object) {
  Stopwatch clock;
  llvm::orc::LLJIT& jit = *impl_->jit;
  auto dylib = jit.createJITDylib(fmt::format("{}#{}", object.kernel, impl_->next_id++));
  if (!dylib)
    return jit_error("cannot create a JITDylib", dylib.takeError());
  dylib->addToLinkOrder(jit.getMainJITDylib());
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(object.bytes.data(), object.bytes.size()), object.kernel);
  auto unload_on_error = [&](const char* what, llvm::Error err) {
    llvm::consumeError(jit.getExecutionSession().removeJITDylib(*dylib));
    return jit_error(what, std::move(err));
  };
  if (auto err = jit.addObjectFile(*dylib, std::move(buffer)))
    return unload_on_error("cannot add the kernel's object code", std::move(err));
  auto symbol = jit.lookup(*dylib, object.packed_kernel);
  if (!symbol)
    return unload_on_error("cannot link the kernel", symbol.takeError());
  auto fn = symbol->toPtr<PackedKernelFn>();
  return std::unique_ptr<LoadedKernel>(new LoadedKernel(*this, &*dylib, fn, clock.elapsed_ms()));
}

void Jit::unload(void* dylib) {
  auto* jd = static_cast<llvm::orc::JITDylib*>(dylib);
  llvm::consumeError(impl_->jit->getExecutionSession().removeJITDylib(*jd));
}

LoadedKernel::~LoadedKernel() {
  jit_.unload(dylib_);
}

} // namespace kiln::codegen
