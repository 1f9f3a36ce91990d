#include "onednn_baselines.h"

namespace kiln::bench {

using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

void OneDnnPrimitive::run() {
  primitive_.execute(stream_, args_);
  stream_.wait();
}

OneDnnMatmul::OneDnnMatmul(std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
                           const float* b) {
  dnnl::memory::desc a_md({m, k}, dt::f32, tag::ab), b_md({k, n}, dt::f32, tag::ab),
      c_md({m, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), engine_);
  impl_ = pd.impl_info_str();
  primitive_ = dnnl::matmul(pd);
  dst_ = dnnl::memory(c_md, engine_);
  args_ = {{DNNL_ARG_SRC, wrap(a_md, a)}, {DNNL_ARG_WEIGHTS, wrap(b_md, b)}, {DNNL_ARG_DST, dst_}};
}

OneDnnInnerProduct::OneDnnInnerProduct(std::int64_t m, std::int64_t n, std::int64_t k,
                                       const float* a, const float* b) {
  // Weights are {output channels, input channels}; kiln's B[K, N] is that
  // matrix transposed, the "ba" layout.
  dnnl::memory::desc src_md({m, k}, dt::f32, tag::ab), wei_md({n, k}, dt::f32, tag::ba),
      dst_md({m, n}, dt::f32, tag::ab);
  dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src_md, wei_md,
                                         dst_md);
  dnnl::inner_product_forward::primitive_desc pd(desc, engine_);
  impl_ = pd.impl_info_str();
  primitive_ = dnnl::inner_product_forward(pd);
  dst_ = dnnl::memory(dst_md, engine_);
  args_ = {
      {DNNL_ARG_SRC, wrap(src_md, a)}, {DNNL_ARG_WEIGHTS, wrap(wei_md, b)}, {DNNL_ARG_DST, dst_}};
}

OneDnnSoftmax::OneDnnSoftmax(std::int64_t m, std::int64_t n, const float* x) {
  dnnl::memory::desc md({m, n}, dt::f32, tag::ab);
  dnnl::softmax_forward::desc desc(dnnl::prop_kind::forward_inference, md, 1);
  dnnl::softmax_forward::primitive_desc pd(desc, engine_);
  impl_ = pd.impl_info_str();
  primitive_ = dnnl::softmax_forward(pd);
  dst_ = dnnl::memory(md, engine_);
  args_ = {{DNNL_ARG_SRC, wrap(md, x)}, {DNNL_ARG_DST, dst_}};
}

OneDnnLayerNorm::OneDnnLayerNorm(std::int64_t m, std::int64_t n, const float* x, const float* gamma,
                                 const float* beta, float epsilon) {
  dnnl::memory::desc md({m, n}, dt::f32, tag::ab), channel_md({n}, dt::f32, tag::a);
  dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, md, epsilon,
                                               dnnl::normalization_flags::use_scale |
                                                   dnnl::normalization_flags::use_shift);
  dnnl::layer_normalization_forward::primitive_desc pd(desc, engine_);
  impl_ = pd.impl_info_str();
  primitive_ = dnnl::layer_normalization_forward(pd);
  dst_ = dnnl::memory(md, engine_);
  args_ = {{DNNL_ARG_SRC, wrap(md, x)},
           {DNNL_ARG_SCALE, wrap(channel_md, gamma)},
           {DNNL_ARG_SHIFT, wrap(channel_md, beta)},
           {DNNL_ARG_DST, dst_}};
}

} // namespace kiln::bench
