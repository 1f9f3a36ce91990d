#include "fma_peak.h"

#include "kiln/codegen/runtime.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/support/stopwatch.h"

#include <algorithm>
#include <vector>

namespace kiln::bench {

using ir::Expr;
using schedule::Block;
using schedule::For;
using schedule::ForKind;
using schedule::Stmt;
using schedule::Store;

namespace {

/// Twelve chains cover a latency of 4-6 cycles on two FMA pipes with room
/// to spare, and with the multiplier and addend leave registers free on
/// 16-register (AVX2) machines.
constexpr int kAccumulators = 12;
/// FMA steps per chain in one call: about 20 ms at 100 GFLOPS a thread
/// with 8 lanes.
constexpr std::int64_t kSteps = std::int64_t{1} << 22;

/// The kernel: per thread t, `acc[a] = acc[a] * x + x` for every
/// accumulator a, kSteps times, then out[t, a] = acc[a]. With x = 0.5 every
/// chain converges to 1: no overflow, no subnormals.
schedule::LoweredFunc fma_kernel(int threads, int lanes) {
  using schedule::Buffer;
  using schedule::BufferScope;
  const auto f32 = ir::ScalarType::F32;
  const Buffer x{"x", f32, {lanes}, BufferScope::Argument};
  const Buffer out{"out", f32, {threads, kAccumulators, lanes}, BufferScope::Argument};
  const Buffer acc{"acc", f32, {kAccumulators, lanes}, BufferScope::Local};
  const Expr lane = ir::Var::make("l");
  const Expr thread = ir::Var::make("t");
  auto x_at = [&] { return ir::Load::make("x", {lane}, f32); };
  auto acc_at = [&](int a) { return ir::Load::make("acc", {Expr(a), lane}, f32); };
  // One statement per accumulator, each a vector loop over the lanes.
  auto each = [&](auto statement) {
    std::vector<Stmt> stmts;
    for (int a = 0; a < kAccumulators; ++a)
      stmts.push_back(For::make("l", lanes, ForKind::Vectorized, statement(a)));
    return Block::make(std::move(stmts));
  };
  Stmt init = each([&](int a) { return Store::make("acc", {Expr(a), lane}, x_at()); });
  Stmt step = each([&](int a) {
    return Store::make("acc", {Expr(a), lane}, acc_at(a) * x_at() + x_at());
  });
  Stmt save = each([&](int a) { return Store::make("out", {thread, Expr(a), lane}, acc_at(a)); });
  Stmt body = schedule::Allocate::make(
      acc, Block::make({init, For::make("i", kSteps, ForKind::Serial, step), save}));
  return {"kiln_fma_peak", {x, out}, For::make("t", threads, ForKind::Parallel, body)};
}

} // namespace

Expected<FmaPeak> fma_peak(const Target& target, int threads, int repeats) {
  threads = std::max(1, threads);
  const int lanes = std::max(1, target.vector_bits / 32);
  auto kernel = measure::jit_compile(fma_kernel(threads, lanes), target);
  if (!kernel)
    return kernel.error();
  std::vector<float> x(static_cast<std::size_t>(lanes), 0.5f);
  std::vector<float> out(static_cast<std::size_t>(threads) * kAccumulators * lanes);
  void* args[] = {x.data(), out.data()};
  const int saved_threads = kiln_rt_num_threads();
  kiln_rt_set_num_threads(threads);
  kernel->kernel->run(args); // warm up: the pool's threads started, the clock up
  double best = 0;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    Stopwatch clock;
    kernel->kernel->run(args);
    const double flops = 2.0 * static_cast<double>(kSteps) * kAccumulators * lanes * threads;
    best = std::max(best, flops / clock.elapsed_ms() / 1e6);
  }
  kiln_rt_set_num_threads(saved_threads);
  for (float v : out)
    if (v < 0.99f || v > 1.01f)
      return Error("fma-peak", "the FMA peak kernel computed a wrong value: a bug in kiln");
  return FmaPeak{best, kAccumulators, lanes};
}

} // namespace kiln::bench
