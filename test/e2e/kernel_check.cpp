#include "kernel_check.h"

#include "small_shapes.h"

#include "kiln/codegen/target.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/transform_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace kiln::test {

namespace {

/// Bytes of canary on each side of every argument (a multiple of 64, so the
/// argument itself stays 64-byte aligned).
constexpr std::size_t kCanaryBytes = 256;
constexpr unsigned char kCanary = 0xA5;

/// One argument copied into the middle of a canary-filled allocation.
class GuardedBuffer {
public:
  GuardedBuffer(const void* data, std::size_t bytes) : bytes_(bytes) {
    std::size_t total = kCanaryBytes + (bytes + 63) / 64 * 64 + kCanaryBytes;
    base_ = static_cast<unsigned char*>(std::aligned_alloc(64, total));
    if (!base_)
      throw std::bad_alloc();
    total_ = total;
    std::memset(base_, kCanary, total);
    std::memcpy(data_ptr(), data, bytes);
  }
  ~GuardedBuffer() { std::free(base_); }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  unsigned char* data_ptr() { return base_ + kCanaryBytes; }
  /// "" when both canaries are intact, else which side was overwritten.
  std::string damaged_side() const {
    for (std::size_t i = 0; i < kCanaryBytes; ++i)
      if (base_[i] != kCanary)
        return "before the start";
    for (std::size_t i = kCanaryBytes + bytes_; i < total_; ++i)
      if (base_[i] != kCanary)
        return "past the end";
    return "";
  }

private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_ = 0, total_ = 0;
};

} // namespace

KernelChecker::KernelChecker() {
  auto compiler = codegen::Compiler::create(codegen::host_target());
  if (!compiler)
    throw std::runtime_error(compiler.error().render());
  compiler_ = std::move(*compiler);
  auto jit = codegen::Jit::create();
  if (!jit)
    throw std::runtime_error(jit.error().render());
  jit_ = std::move(*jit);
}

KernelChecker::~KernelChecker() = default;

KernelChecker& KernelChecker::shared() {
  static KernelChecker checker;
  return checker;
}

KernelOutcome KernelChecker::check(const ir::ComputeDAG& dag, const schedule::State& state) {
  schedule::LoweredFunc func;
  try {
    func = schedule::lower(state);
  } catch (const std::exception& e) {
    return {fmt::format("lowering threw: {}", e.what()), {}};
  }
  return check(dag, func);
}

KernelOutcome KernelChecker::check(const ir::ComputeDAG& dag, const schedule::LoweredFunc& func) {
  KernelOutcome out;
  auto object = compiler_->compile(func);
  if (!object) {
    out.failure = "compile error: " + object.error().render();
    return out;
  }
  auto kernel = jit_->load(*object);
  if (!kernel) {
    out.failure = "JIT error: " + kernel.error().render();
    return out;
  }

  measure::ArgumentBuffers buffers(dag, 1);
  auto packed = std::count_if(func.args.begin(), func.args.end(), [](const schedule::Buffer& b) {
    return b.scope == schedule::BufferScope::Packed;
  });
  if (buffers.size() + packed != static_cast<std::int64_t>(func.args.size())) {
    out.failure = fmt::format("the kernel takes {} arguments, the op has {} and {} are packed",
                              func.args.size(), buffers.size(), packed);
    return out;
  }
  std::vector<std::unique_ptr<GuardedBuffer>> guarded;
  std::vector<void*> pointers;
  for (int i = 0; i < buffers.size(); ++i) {
    const ir::Stage& s = dag.stage(buffers.stage_of(i));
    std::size_t bytes = static_cast<std::size_t>(buffers.num_elements(i) * ir::bytes(s.dtype));
    guarded.push_back(std::make_unique<GuardedBuffer>(buffers.pointers()[i], bytes));
    pointers.push_back(guarded.back()->data_ptr());
  }
  (*kernel)->prepack(pointers.data());
  (*kernel)->run(pointers.data());

  for (int i = 0; i < buffers.size(); ++i) {
    const ir::Stage& s = dag.stage(buffers.stage_of(i));
    std::size_t bytes = static_cast<std::size_t>(buffers.num_elements(i) * ir::bytes(s.dtype));
    std::string side = guarded[i]->damaged_side();
    if (!side.empty()) {
      out.failure = fmt::format("the kernel wrote {} of {}", side, s.name);
      return out;
    }
    if (!s.is_output) {
      if (std::memcmp(guarded[i]->data_ptr(), buffers.pointers()[i], bytes) != 0) {
        out.failure = fmt::format("the kernel wrote to its input {}", s.name);
        return out;
      }
      continue;
    }
    std::memcpy(buffers.pointers()[i], guarded[i]->data_ptr(), bytes);
  }

  measure::CheckOptions options;
  options.full_check_max_flops = std::numeric_limits<double>::infinity();
  try {
    out.check = measure::check_outputs(dag, buffers, options);
  } catch (const std::exception& e) {
    out.failure = fmt::format("the interpreter threw: {}", e.what());
    return out;
  }
  if (!out.check.passed)
    out.failure = "wrong answer: " + out.check.describe();
  else if (out.check.sampled())
    out.failure = "only a sample was checked: " + out.check.describe();
  return out;
}

std::string reproduce_hint(const std::string& op, const ir::ParamOverrides& shape,
                           const schedule::State& state, const std::string& path) {
  std::string file_text = schedule::schedule_file_text(op, state.steps());
  std::string file = path.empty() ? std::string("schedule.json") : path;
  if (!path.empty()) {
    std::ofstream os(path);
    os << file_text << "\n";
  }
  return fmt::format("steps: {}\nreproduce: kiln run ops/{}.kop {} --schedule {}\n{}{}",
                     state.to_string(), op, set_flags(shape), file,
                     path.empty() ? "with schedule.json:\n" : "written to that file:\n", file_text);
}

} // namespace kiln::test
