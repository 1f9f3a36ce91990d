// Loading compiled kernels into this process with ORC (LLJIT).
#ifndef KILN_CODEGEN_JIT_H
#define KILN_CODEGEN_JIT_H

#include "kiln/codegen/compiler.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

namespace kiln::codegen {

using PackedKernelFn = void (*)(void** args);

class Jit;

/// A kernel loaded into the JIT; unloaded when destroyed. Must not outlive
/// its Jit. A kernel that reads buffers packed ahead from constant inputs
/// owns them: prepack() fills them, run() passes them after the outputs.
class LoadedKernel {
public:
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;

  /// Computes the packed buffers from the constant inputs among `args`
  /// (one pointer per DAG argument, inputs then outputs): before the first
  /// run(), and again whenever a constant input changes. Does nothing for
  /// a kernel that packs nothing ahead.
  void prepack(void** args);
  /// Calls the kernel with one pointer per DAG argument (inputs then
  /// outputs), and its packed buffers.
  void run(void** args) {
    if (packed_.empty())
      return fn_(args);
    KILN_ASSERT(prepacked_, "prepack() runs before a kernel with packed buffers");
    std::copy(args, args + num_dag_args_, call_args_.begin());
    fn_(call_args_.data());
  }
  bool has_prepack() const { return prepack_fn_ != nullptr; }
  PackedKernelFn function() const { return fn_; }
  double link_ms() const { return link_ms_; }

private:
  friend class Jit;
  struct FreeAligned {
    void operator()(void* p) const { std::free(p); }
  };
  using AlignedBuffer = std::unique_ptr<void, FreeAligned>;
  LoadedKernel(Jit& jit, void* dylib, PackedKernelFn fn, PackedKernelFn prepack_fn, int num_args,
               std::vector<AlignedBuffer> packed, double link_ms);

  Jit& jit_;
  void* dylib_;
  PackedKernelFn fn_;
  PackedKernelFn prepack_fn_;
  double link_ms_;
  int num_dag_args_ = 0;
  std::vector<AlignedBuffer> packed_;
  /// The DAG arguments' pointers, then the packed buffers'.
  std::vector<void*> call_args_;
  bool prepacked_ = false;
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
