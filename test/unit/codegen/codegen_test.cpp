#include "../ir/test_dags.h"

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/jit.h"
#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/builder.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace kiln;

TEST_CASE("host target is detected with a vector width", "[codegen][target]") {
  Target t = codegen::host_target();
  REQUIRE(!t.triple.empty());
  REQUIRE(!t.cpu.empty());
  REQUIRE(t.vector_bits >= 128);
  REQUIRE(t.cores >= 1);
  REQUIRE(t.vector_lanes(32) == t.vector_bits / 32);
}

TEST_CASE("named targets: a known CPU works, an unknown one is a clear error",
          "[codegen][target]") {
  auto zen = codegen::named_target("x86_64-linux-gnu", "znver4");
  REQUIRE(zen.ok());
  REQUIRE(zen->vector_bits >= 256);
  auto bad = codegen::named_target("x86_64-linux-gnu", "notacpu");
  REQUIRE_FALSE(bad.ok());
  REQUIRE(bad.error().id() == "unknown-cpu");
  auto bad_triple = codegen::named_target("nosuch-arch-none", "generic");
  REQUIRE_FALSE(bad_triple.ok());
}

TEST_CASE("entry point: noalias aligned pointers, packed wrapper", "[codegen][llvm]") {
  auto compiler = codegen::Compiler::create(codegen::host_target());
  REQUIRE(compiler.ok());
  auto ir =
      (*compiler)->dump(schedule::lower_naive(test::matmul_dag(8, 8, 8)), codegen::DumpStage::LLVM);
  REQUIRE(ir.ok());
  REQUIRE_THAT(*ir, Catch::Contains("define void @kiln_matmul(ptr noalias nocapture align 64"));
  REQUIRE_THAT(*ir, Catch::Contains("define void @kiln_matmul_packed(ptr %args)"));
  auto asm_text = (*compiler)->dump(schedule::lower_naive(test::matmul_dag(8, 8, 8)),
                                    codegen::DumpStage::Assembly);
  REQUIRE(asm_text.ok());
  REQUIRE_THAT(*asm_text, Catch::Contains("kiln_matmul:"));
}

TEST_CASE("two kernels with the same symbol load side by side and compute", "[codegen][jit]") {
  auto compiler = codegen::Compiler::create(codegen::host_target());
  auto jit = codegen::Jit::create();
  REQUIRE(compiler.ok());
  REQUIRE(jit.ok());
  auto small = (*compiler)->compile(schedule::lower_naive(test::matmul_dag(2, 2, 2)));
  auto other = (*compiler)->compile(schedule::lower_naive(test::matmul_dag(2, 2, 3)));
  REQUIRE(small.ok());
  REQUIRE(other.ok());
  REQUIRE(!small->bytes.empty());
  REQUIRE(small->times.total_ms() > 0);
  auto k1 = (*jit)->load(*small);
  auto k2 = (*jit)->load(*other);
  REQUIRE(k1.ok());
  REQUIRE(k2.ok());
  alignas(64) float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4] = {};
  void* args[] = {a, b, c};
  (*k1)->run(args); // A 2x2 [[1,2],[3,4]] * B [[1,0],[0,1]]
  REQUIRE(std::vector<float>(c, c + 4) == std::vector<float>{1, 2, 3, 4});
  (*k2)->run(args); // A 2x3 [[1,2,3],[4,5,6]] * B 3x2 [[1,0],[0,1],[1,1]]
  REQUIRE(std::vector<float>(c, c + 4) == std::vector<float>{4, 5, 10, 11});
}

TEST_CASE("codegen errors: unknown target, bad object code", "[codegen][errors]") {
  auto bad_triple = codegen::named_target("nosuch-arch-none", "generic");
  REQUIRE(bad_triple.error().id() == "unknown-target");
  auto jit = codegen::Jit::create();
  REQUIRE(jit.ok());
  codegen::ObjectCode garbage;
  garbage.kernel = "kiln_garbage";
  garbage.packed_kernel = "kiln_garbage_packed";
  garbage.bytes = {'n', 'o', 't', ' ', 'e', 'l', 'f'};
  auto loaded = (*jit)->load(garbage);
  REQUIRE_FALSE(loaded.ok());
  REQUIRE(loaded.error().id() == "jit-error");
}

TEST_CASE("a target that cannot emit object files is a compile error", "[codegen][errors]") {
  // NVPTX emits assembly (PTX) only.
  auto ptx = codegen::named_target("nvptx64-nvidia-cuda", "sm_80");
  REQUIRE(ptx.ok());
  auto compiler = codegen::Compiler::create(*ptx);
  REQUIRE(compiler.ok());
  auto object = (*compiler)->compile(schedule::lower_naive(test::matmul_dag(2, 2, 2)));
  REQUIRE_FALSE(object.ok());
  REQUIRE(object.error().id() == "compile-error");
}

TEST_CASE("a thread count past the runtime's limit is capped", "[codegen][runtime]") {
  kiln_rt_set_num_threads(100000);
  CHECK(kiln_rt_num_threads() == KILN_RT_MAX_THREADS);
  kiln_rt_set_num_threads(0);
  CHECK(kiln_rt_num_threads() >= 1);
}

TEST_CASE("vector exp and log call glibc's libmvec, and compute what libm does",
          "[codegen][vector-math]") {
  ir::DAGBuilder b("vmath");
  auto A = b.input("A", {64});
  auto E = b.compute("E", {{"i", 64}}, [&](const std::vector<ir::Expr>& v) {
    return ir::exp(A(v[0])) + ir::log(ir::abs(A(v[0])) + 1.0f);
  });
  b.output(E);
  ir::ComputeDAG dag = std::move(b).build();
  schedule::State s(dag);
  s.split("E", "i", {16});
  s.vectorize("E", "i.1");
  Target target = codegen::host_target();
  auto compiler = codegen::Compiler::create(target);
  REQUIRE(compiler.ok());
  auto ir = (*compiler)->dump(schedule::lower(s), codegen::DumpStage::LLVM);
  REQUIRE(ir.ok());
  if (target.arch() == "x86_64") {
    // No scalarised intrinsic: one vector call per function and chunk.
    REQUIRE_THAT(*ir, Catch::Contains("@_ZGV") && Catch::Contains("v_expf(") &&
                          Catch::Contains("v_logf("));
    REQUIRE_THAT(*ir, !Catch::Contains("@llvm.exp.v") && !Catch::Contains("@llvm.log.v"));
  }
  auto object = (*compiler)->compile(schedule::lower(s));
  REQUIRE(object.ok());
  auto jit = codegen::Jit::create();
  REQUIRE(jit.ok());
  auto kernel = (*jit)->load(*object);
  REQUIRE(kernel.ok());
  alignas(64) float a[64], e[64];
  for (int i = 0; i < 64; ++i)
    a[i] = -8.0f + 0.25f * static_cast<float>(i);
  void* args[] = {a, e};
  (*kernel)->run(args);
  for (int i = 0; i < 64; ++i) {
    double want = std::exp(static_cast<double>(a[i])) + std::log(std::fabs(a[i]) + 1.0);
    REQUIRE(e[i] == Approx(want).epsilon(1e-6));
  }
}

TEST_CASE("erf and tanh call libm in scalar code and libmvec in vector loops",
          "[codegen][vector-math]") {
  ir::DAGBuilder b("vmath");
  auto A = b.input("A", {64});
  auto E = b.compute("E", {{"i", 64}}, [&](const std::vector<ir::Expr>& v) {
    return ir::erf(A(v[0])) + 0.5f * ir::tanh(A(v[0]));
  });
  b.output(E);
  ir::ComputeDAG dag = std::move(b).build();
  Target target = codegen::host_target();
  auto compiler = codegen::Compiler::create(target);
  REQUIRE(compiler.ok());
  auto jit = codegen::Jit::create();
  REQUIRE(jit.ok());
  for (bool vector : {false, true}) {
    schedule::State s(dag);
    if (vector) {
      s.split("E", "i", {16});
      s.vectorize("E", "i.1");
    }
    auto ir = (*compiler)->dump(schedule::lower(s), codegen::DumpStage::LLVM);
    REQUIRE(ir.ok());
    if (vector && target.arch() == "x86_64")
      REQUIRE_THAT(*ir, Catch::Contains("v_erff(") && Catch::Contains("v_tanhf("));
    auto object = (*compiler)->compile(schedule::lower(s));
    REQUIRE(object.ok());
    auto kernel = (*jit)->load(*object);
    REQUIRE(kernel.ok());
    alignas(64) float a[64], e[64];
    for (int i = 0; i < 64; ++i)
      a[i] = -4.0f + 0.125f * static_cast<float>(i);
    void* args[] = {a, e};
    (*kernel)->run(args);
    for (int i = 0; i < 64; ++i) {
      double want = std::erf(static_cast<double>(a[i])) + 0.5 * std::tanh(a[i]);
      REQUIRE(e[i] == Approx(want).margin(1e-6));
    }
  }
}

TEST_CASE("a kernel with a packed constant input computes with what prepack packed",
          "[codegen][jit][prepack]") {
  // C = A B, B constant and copied at the root in the order C.local's
  // vector loop over i reads it (B.cache stores j outermost).
  ir::DAGBuilder b("dense");
  auto A = b.input("A", {16, 4});
  auto B = b.constant_input("B", {4, 8});
  ir::IterVar k{"k", 4};
  b.output(b.compute("C", {{"i", 16}, {"j", 8}}, [&](const std::vector<ir::Expr>& v) {
    return ir::sum(A(v[0], ir::var(k)) * B(ir::var(k), v[1]), {k});
  }));
  schedule::State s(std::move(b).build());
  s.cache_write("C");
  s.cache_read("B", "C.local");
  s.parallel("B.cache", "ax0");
  s.reorder("C.local", {"k", "j", "i"});
  s.vectorize("C.local", "i");
  schedule::LoweredFunc func = schedule::lower(s);
  REQUIRE(func.has_prepack());

  auto compiler = codegen::Compiler::create(codegen::host_target());
  REQUIRE(compiler.ok());
  auto object = (*compiler)->compile(func);
  REQUIRE(object.ok());
  REQUIRE(object->packed_bytes == std::vector<std::int64_t>{4 * 8 * 4});
  REQUIRE(object->num_args == 4);
  auto jit = codegen::Jit::create();
  REQUIRE(jit.ok());
  auto kernel = (*jit)->load(*object);
  REQUIRE(kernel.ok());
  REQUIRE((*kernel)->has_prepack());

  alignas(64) float a[16 * 4], w[4 * 8], c[16 * 8];
  for (int i = 0; i < 16 * 4; ++i)
    a[i] = static_cast<float>(i % 7) - 3.0f;
  void* args[] = {a, w, c};
  for (float scale : {1.0f, -2.0f}) {
    // New weights take effect when they are packed again.
    for (int i = 0; i < 4 * 8; ++i)
      w[i] = scale * static_cast<float>(i % 5);
    (*kernel)->prepack(args);
    (*kernel)->run(args);
    for (int i = 0; i < 16; ++i)
      for (int j = 0; j < 8; ++j) {
        float want = 0;
        for (int kk = 0; kk < 4; ++kk)
          want += a[i * 4 + kk] * w[kk * 8 + j];
        INFO("scale " << scale << ", C[" << i << ", " << j << "]");
        REQUIRE(c[i * 8 + j] == want);
      }
  }
}
