#include "vector_math.h"

#include <fmt/format.h>

namespace kiln::codegen {

bool uses_libmvec(const Target& target) {
  return target.arch() == "x86_64" && target.triple.find("linux-gnu") != std::string::npos;
}

static bool has_feature(const Target& target, std::string_view feature) {
  const std::string& f = target.features;
  for (std::size_t at = f.find(feature); at != std::string::npos; at = f.find(feature, at + 1)) {
    bool starts = at > 0 && f[at - 1] == '+';
    bool ends = at + feature.size() == f.size() || f[at + feature.size()] == ',';
    if (starts && ends)
      return true;
  }
  return false;
}

std::vector<VectorVariant> libmvec_variants(const Target& target, ir::Intrinsic fn, bool f64) {
  if (!uses_libmvec(target))
    return {};
  std::string name;
  switch (fn) {
  case ir::Intrinsic::Exp:
    name = "exp";
    break;
  case ir::Intrinsic::Log:
    name = "log";
    break;
  case ir::Intrinsic::Erf:
    name = "erf";
    break;
  case ir::Intrinsic::Tanh:
    name = "tanh";
    break;
  case ir::Intrinsic::Sqrt:
  case ir::Intrinsic::Abs:
    return {}; // single instructions already
  }
  if (!f64)
    name += 'f';
  // The vector function ABI's ISA letters: e AVX-512, d AVX2, b SSE.
  const unsigned scale = f64 ? 1 : 2;
  std::vector<VectorVariant> out;
  // Only use the 512-bit variant when the kernels are built with 512-bit
  // vectors (the backend may prefer 256 on some AVX-512 CPUs).
  if (has_feature(target, "avx512f") && target.vector_bits >= 512)
    out.push_back({8 * scale, fmt::format("_ZGVeN{}v_{}", 8 * scale, name)});
  if (has_feature(target, "avx2"))
    out.push_back({4 * scale, fmt::format("_ZGVdN{}v_{}", 4 * scale, name)});
  out.push_back({2 * scale, fmt::format("_ZGVbN{}v_{}", 2 * scale, name)});
  return out;
}

} // namespace kiln::codegen
