// Loading compiled kernels into this process with ORC (LLJIT).
#ifndef KILN_CODEGEN_JIT_H
#define KILN_CODEGEN_JIT_H

#include "kiln/codegen/compiler.h"

#include <memory>

namespace kiln::codegen {

using PackedKernelFn = void (*)(void** args);

class Jit;

/// A kernel loaded into the JIT; unloaded when destroyed. Must not outlive
/// its Jit.
class LoadedKernel {
public:
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  /// Calls the kernel with one pointer per argument (inputs then outputs).
  void run(void** args) const { fn_(args); }
  PackedKernelFn function() const { return fn_; }
  double link_ms() const { return link_ms_; }

private:
  friend class Jit;
  LoadedKernel(Jit& jit, void* dylib, PackedKernelFn fn, double link_ms)
      : jit_(jit), dylib_(dylib), fn_(fn), link_ms_(link_ms) {}
  Jit& jit_;
  void* dylib_;
  PackedKernelFn fn_;
  double link_ms_;
};

/// One LLJIT instance (creating one costs ~20 ms: make one per worker, not
/// per kernel). Each kernel gets its own JITDylib, so kernels with the same
/// symbol names can be loaded side by side. Not thread-safe.
class Jit {
public:
  static Expected<std::unique_ptr<Jit>> create();
  ~Jit();

  Expected<std::unique_ptr<LoadedKernel>> load(const ObjectCode& object);

private:
  friend class LoadedKernel;
  struct Impl;
  explicit Jit(std::unique_ptr<Impl> impl);
  void unload(void* dylib);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::codegen

#endif // KILN_CODEGEN_JIT_H
