// oneDNN primitives kiln's kernels are compared with, beyond the conv of
// kernel_bench.cpp: matmul, inner product (a dense layer; batch 1 is a
// GEMV), softmax along the rows and layer normalization. Each runs on the
// kernel's own input buffers (row-major, kiln's layouts) and writes an
// output of its own; `impl` names the implementation oneDNN chose.
#ifndef KILN_BENCH_ONEDNN_BASELINES_H
#define KILN_BENCH_ONEDNN_BASELINES_H

#include <cstdint>
#include <dnnl.hpp>
#include <string>
#include <unordered_map>

namespace kiln::bench {

class OneDnnPrimitive {
public:
  void run();
  const float* output() const { return static_cast<const float*>(dst_.get_data_handle()); }
  const std::string& impl() const { return impl_; }

protected:
  OneDnnPrimitive() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}
  /// A memory over a buffer kiln owns.
  dnnl::memory wrap(const dnnl::memory::desc& md, const float* data) {
    return dnnl::memory(md, engine_, const_cast<float*>(data));
  }

  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::primitive primitive_;
  std::unordered_map<int, dnnl::memory> args_;
  dnnl::memory dst_;
  std::string impl_;
};

/// C[M, N] = A[M, K] · B[K, N] by the matmul primitive.
class OneDnnMatmul : public OneDnnPrimitive {
public:
  OneDnnMatmul(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b);
};

/// The same product as a dense layer, the inner product primitive: source
/// A[M, K], weights B as N output channels of K inputs (stored K × N).
class OneDnnInnerProduct : public OneDnnPrimitive {
public:
  OneDnnInnerProduct(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                     const float* b);
};

/// Softmax of each row of X[M, N].
class OneDnnSoftmax : public OneDnnPrimitive {
public:
  OneDnnSoftmax(std::int64_t m, std::int64_t n, const float* x);
};

/// Layer normalization of each row of X[M, N], scaled by gamma[N] and
/// shifted by beta[N].
class OneDnnLayerNorm : public OneDnnPrimitive {
public:
  OneDnnLayerNorm(std::int64_t m, std::int64_t n, const float* x, const float* gamma,
                  const float* beta, float epsilon);
};

} // namespace kiln::bench

#endif
