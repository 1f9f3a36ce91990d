#include "kiln/measure/argument_buffers.h"

#include "kiln/measure/memory.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

namespace kiln::measure {

static std::byte* aligned_bytes(const ir::Stage& stage) {
  // Sizes of a validated DAG fit in 63 bits (compute_dag.cpp, check_size).
  std::size_t bytes = static_cast<std::size_t>(stage.num_elements()) * ir::bytes(stage.dtype);
  std::size_t size = (bytes + 63) / 64 * 64;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, size ? size : 64));
  if (!p)
    throw UserError(Error("not-enough-memory",
                          fmt::format("cannot allocate {} for the argument '{}'; make the op "
                                      "smaller (e.g. with --set) or free memory",
                                      format_bytes(static_cast<std::int64_t>(bytes)), stage.name)));
  return p;
}

ArgumentBuffers::ArgumentBuffers(const ir::ComputeDAG& dag, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int index : dag.arguments()) {
    const ir::Stage& s = dag.stage(index);
    Arg arg{s.name, index, s.dtype, s.num_elements(), s.is_output};
    arg.data = {aligned_bytes(s), &std::free};
    args_.push_back(std::move(arg));
  }
  for (Arg& a : args_) {
    pointers_.push_back(a.data.get());
    if (a.is_output)
      continue;
    std::uniform_real_distribution<float> real(-1.0f, 1.0f);
    std::uniform_int_distribution<int> integer(-8, 8);
    for (std::int64_t i = 0; i < a.elements; ++i) {
      switch (a.type) {
      case ir::ScalarType::F32:
        reinterpret_cast<float*>(a.data.get())[i] = real(rng);
        break;
      case ir::ScalarType::F64:
        reinterpret_cast<double*>(a.data.get())[i] = real(rng);
        break;
      case ir::ScalarType::I32:
        reinterpret_cast<std::int32_t*>(a.data.get())[i] = integer(rng);
        break;
      case ir::ScalarType::I64:
        reinterpret_cast<std::int64_t*>(a.data.get())[i] = integer(rng);
        break;
      case ir::ScalarType::Bool:
        reinterpret_cast<std::uint8_t*>(a.data.get())[i] = integer(rng) > 0;
        break;
      }
    }
  }
  poison_outputs();
}

void ArgumentBuffers::poison_outputs() {
  for (Arg& a : args_) {
    if (!a.is_output)
      continue;
    for (std::int64_t i = 0; i < a.elements; ++i) {
      switch (a.type) {
      case ir::ScalarType::F32:
        reinterpret_cast<float*>(a.data.get())[i] = std::numeric_limits<float>::quiet_NaN();
        break;
      case ir::ScalarType::F64:
        reinterpret_cast<double*>(a.data.get())[i] = std::numeric_limits<double>::quiet_NaN();
        break;
      case ir::ScalarType::I32:
        reinterpret_cast<std::int32_t*>(a.data.get())[i] = std::numeric_limits<std::int32_t>::min();
        break;
      case ir::ScalarType::I64:
        reinterpret_cast<std::int64_t*>(a.data.get())[i] = std::numeric_limits<std::int64_t>::min();
        break;
      case ir::ScalarType::Bool:
        reinterpret_cast<std::uint8_t*>(a.data.get())[i] = 0xAB;
        break;
      }
    }
  }
}

double ArgumentBuffers::value(int i, std::int64_t flat) const {
  const Arg& a = args_.at(i);
  const std::byte* p = a.data.get();
  switch (a.type) {
  case ir::ScalarType::F32:
    return reinterpret_cast<const float*>(p)[flat];
  case ir::ScalarType::F64:
    return reinterpret_cast<const double*>(p)[flat];
  case ir::ScalarType::I32:
    return reinterpret_cast<const std::int32_t*>(p)[flat];
  case ir::ScalarType::I64:
    return static_cast<double>(reinterpret_cast<const std::int64_t*>(p)[flat]);
  case ir::ScalarType::Bool:
    return reinterpret_cast<const std::uint8_t*>(p)[flat];
  }
  return 0;
}

template <typename T> static std::vector<double> as_double(const std::byte* p, std::int64_t n) {
  const T* v = reinterpret_cast<const T*>(p);
  return std::vector<double>(v, v + n);
}

std::vector<double> ArgumentBuffers::values(int i) const {
  const Arg& a = args_.at(i);
  switch (a.type) {
  case ir::ScalarType::F32:
    return as_double<float>(a.data.get(), a.elements);
  case ir::ScalarType::F64:
    return as_double<double>(a.data.get(), a.elements);
  case ir::ScalarType::I32:
    return as_double<std::int32_t>(a.data.get(), a.elements);
  case ir::ScalarType::I64:
    return as_double<std::int64_t>(a.data.get(), a.elements);
  case ir::ScalarType::Bool:
    return as_double<std::uint8_t>(a.data.get(), a.elements);
  }
  return {};
}

std::map<std::string, std::vector<double>> ArgumentBuffers::inputs_as_double() const {
  std::map<std::string, std::vector<double>> out;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].is_output)
      continue;
    std::vector<double>& v = out[args_[i].name];
    v.resize(args_[i].elements);
    for (std::int64_t k = 0; k < args_[i].elements; ++k)
      v[k] = value(static_cast<int>(i), k);
  }
  return out;
}

} // namespace kiln::measure
