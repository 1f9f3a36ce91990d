#include "kiln/codegen/jit.h"

#include "target_machine.h"

#include "kiln/codegen/runtime.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/MemoryBuffer.h>

#include <utility>
#include <vector>

namespace kiln::codegen {

struct Jit::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  int next_id = 0;
};

/// Every runtime symbol generated code may call, with its address: the
/// runtime is linked by address, so the tool need not export its symbols.
static std::vector<std::pair<const char*, void*>> runtime_symbols() {
  return {
      {"kiln_rt_alloc", reinterpret_cast<void*>(&kiln_rt_alloc)},
      {"kiln_rt_free", reinterpret_cast<void*>(&kiln_rt_free)},
      {"kiln_rt_parallel_for", reinterpret_cast<void*>(&kiln_rt_parallel_for)},
      {"kiln_rt_num_threads", reinterpret_cast<void*>(&kiln_rt_num_threads)},
  };
}

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
  PackedKernelFn prepack_fn = nullptr;
  if (!object.packed_prepack.empty()) {
    auto prepack = jit.lookup(*dylib, object.packed_prepack);
    if (!prepack)
      return unload_on_error("cannot link the kernel's prepack function", prepack.takeError());
    prepack_fn = prepack->toPtr<PackedKernelFn>();
  }
  KILN_ASSERT(object.packed_bytes.empty() == (prepack_fn == nullptr),
              "packed buffers come with a prepack function");
  std::vector<LoadedKernel::AlignedBuffer> packed;
  for (std::int64_t bytes : object.packed_bytes) {
    // aligned_alloc needs a size that is a multiple of the alignment.
    size_t size = std::max<size_t>(64, (static_cast<size_t>(bytes) + 63) / 64 * 64);
    packed.emplace_back(std::aligned_alloc(64, size));
    if (!packed.back()) {
      llvm::consumeError(jit.getExecutionSession().removeJITDylib(*dylib));
      return Error("not-enough-memory", fmt::format("cannot allocate {} bytes for a packed "
                                                    "buffer of '{}'",
                                                    bytes, object.kernel));
    }
  }
  return std::unique_ptr<LoadedKernel>(new LoadedKernel(
      *this, &*dylib, fn, prepack_fn, object.num_args, std::move(packed), clock.elapsed_ms()));
}

LoadedKernel::LoadedKernel(Jit& jit, void* dylib, PackedKernelFn fn, PackedKernelFn prepack_fn,
                           int num_args, std::vector<AlignedBuffer> packed, double link_ms)
    : jit_(jit), dylib_(dylib), fn_(fn), prepack_fn_(prepack_fn), link_ms_(link_ms),
      num_dag_args_(num_args - static_cast<int>(packed.size())), packed_(std::move(packed)),
      call_args_(static_cast<size_t>(num_args)) {
  for (size_t i = 0; i < packed_.size(); ++i)
    call_args_[num_dag_args_ + i] = packed_[i].get();
}

void LoadedKernel::prepack(void** args) {
  if (!prepack_fn_)
    return;
  std::copy(args, args + num_dag_args_, call_args_.begin());
  prepack_fn_(call_args_.data());
  prepacked_ = true;
}

void Jit::unload(void* dylib) {
  auto* jd = static_cast<llvm::orc::JITDylib*>(dylib);
  llvm::consumeError(impl_->jit->getExecutionSession().removeJITDylib(*jd));
}

LoadedKernel::~LoadedKernel() {
  jit_.unload(dylib_);
}

} // namespace kiln::codegen
