// Private to codegen: vector versions of the language's math functions from
// glibc's libmvec (the x86-64 vector function ABI), which LLVM would
// otherwise expand into one scalar expf/logf call per lane.
#ifndef KILN_LIB_CODEGEN_VECTOR_MATH_H
#define KILN_LIB_CODEGEN_VECTOR_MATH_H

#include "kiln/ir/expr.h"
#include "kiln/support/target.h"

#include <string>
#include <vector>

namespace kiln::codegen {

/// One vector variant: how many lanes it takes, and its symbol.
struct VectorVariant {
  unsigned lanes;
  std::string symbol;
};

/// Whether kernels for `target` may call libmvec: x86-64 with glibc.
bool uses_libmvec(const Target& target);

/// libmvec's variants of `fn` on `f64` or f32 lanes that `target` can run,
/// widest first (AVX-512, AVX2, SSE); empty when there are none (another
/// target, or a function libmvec does not have).
std::vector<VectorVariant> libmvec_variants(const Target& target, ir::Intrinsic fn, bool f64);

} // namespace kiln::codegen

#endif
