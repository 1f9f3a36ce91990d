#include "../ir/test_dags.h"

#include "kiln/ir/printer.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

using namespace kiln;

TEST_CASE("naive lowering of matmul: init, then the reduction innermost", "[schedule][lower]") {
  schedule::LoweredFunc f = schedule::lower_naive(test::matmul_dag(4, 3, 2));
  REQUIRE(f.name == "kiln_matmul");
  REQUIRE(f.args.size() == 3);
  REQUIRE(schedule::to_string(f) == "func kiln_matmul(A: f32[4, 2], B: f32[2, 3], C: f32[4, 3]) {\n"
                                    "  for i in 0..4:\n"
                                    "    for j in 0..3:\n"
                                    "      C[i, j] = 0.0\n"
                                    "      for k in 0..2:\n"
                                    "        C[i, j] = C[i, j] + A[i, k] * B[k, j]\n"
                                    "}\n");
}

TEST_CASE("naive lowering allocates intermediates around their consumers", "[schedule][lower]") {
  ir::DAGBuilder b("chain");
  auto X = b.input("X", {4});
  auto T = b.compute("t", {{"i", 4}}, [&](const std::vector<ir::Expr>& v) { return X(v[0]) * 2; });
  auto Y = b.compute("y", {{"i", 4}},
                     [&](const std::vector<ir::Expr>& v) { return ir::max(T(v[0]), 0.0); });
  b.output(Y);
  schedule::LoweredFunc f = schedule::lower_naive(std::move(b).build());
  REQUIRE(schedule::to_string(f) == "func kiln_chain(X: f32[4], y: f32[4]) {\n"
                                    "  allocate t: f32[4] (heap)\n"
                                    "  for i in 0..4:\n"
                                    "    t[i] = X[i] * 2.0\n"
                                    "  for i in 0..4:\n"
                                    "    y[i] = max(t[i], 0.0)\n"
                                    "}\n");
}

TEST_CASE("reduction identities", "[schedule][lower]") {
  using ir::ReduceOp;
  using ir::ScalarType;
  REQUIRE(ir::to_string(schedule::reduce_identity(ReduceOp::Sum, ScalarType::F32)) == "0.0");
  REQUIRE(ir::to_string(schedule::reduce_identity(ReduceOp::Max, ScalarType::F32)) == "-inf");
  REQUIRE(ir::to_string(schedule::reduce_identity(ReduceOp::Min, ScalarType::I32)) == "2147483647");
}

TEST_CASE("auto_unroll counts vector statements once but caps the lanes it expands",
          "[schedule][lower]") {
  auto nest_for = [](std::int64_t k_inner) {
    schedule::State s(test::matmul_dag(4, 64, 128));
    s.split("C", "k", {k_inner});
    s.reorder("C", {"i", "j", "k.0", "k.1"});
    s.split("C", "j", {64});
    s.reorder("C", {"i", "j.0", "k.0", "k.1", "j.1"});
    s.vectorize("C", "j.1");
    s.pragma_auto_unroll("C", 512);
    return schedule::to_string(schedule::lower(s, {.expand_unrolled = false}));
  };
  // 32 vector statements of 64 lanes: 2048 lanes, unrolled.
  REQUIRE_THAT(nest_for(32), Catch::Contains("unrolled for k.1"));
  // 64 of them: within max_step, but 4096 lanes would be expanded.
  std::string big = nest_for(64);
  REQUIRE_THAT(big, Catch::Contains("for k.1"));
  REQUIRE_THAT(big, !Catch::Contains("unrolled for k.1"));
}

TEST_CASE("nested unrolled loops expand to at most 65536 statements", "[schedule][lower]") {
  // i, j and k unrolled: 64 x 64 x 64 stores (and the init) would be 2^18
  // copies; the inner two are expanded, the outer stays a loop.
  schedule::State s(test::matmul_dag(64, 64, 64));
  s.reorder("C", {"i", "j", "k"});
  for (const char* loop : {"i", "j", "k"})
    s.unroll("C", loop);
  std::string nest = schedule::to_string(schedule::lower(s));
  REQUIRE_THAT(nest, Catch::Contains("for i in 0..64"));
  REQUIRE_THAT(nest, !Catch::Contains("for j"));
  REQUIRE_THAT(nest, !Catch::Contains("for k"));
}

TEST_CASE("a buffer the kernel allocates stores innermost the dimension a vector loop walks",
          "[schedule][lower][layout]") {
  // C = A B with C.local vectorized along i, not j, and A copied for it:
  // the copy and the tile store i last, so the vector loop reads and writes
  // consecutive elements. Arguments keep their layout.
  schedule::State s(test::matmul_dag(16, 8, 4));
  s.cache_write("C");
  s.cache_read("A", "C.local");
  s.split("C", "i", {16});
  s.reorder("C", {"i.0", "j", "i.1"});
  s.compute_at("C.local", "C", "i.0");
  s.reorder("C.local", {"k", "j", "i"});
  s.vectorize("C.local", "i");
  std::string nest = schedule::to_string(schedule::lower(s));
  INFO(nest);
  CHECK_THAT(nest, Catch::Contains("allocate A.cache: f32[4, 16] (heap)"));
  CHECK_THAT(nest, Catch::Contains("allocate C.local: f32[8, 16] (local)"));
  CHECK_THAT(nest, Catch::Contains("A.cache[ax1, ax0] = A[ax0, ax1]"));
  CHECK_THAT(nest, Catch::Contains("C[i.0 * 16 + i.1, j] = C.local[j, i.1]") ||
                       Catch::Contains("C[i.1, j] = C.local[j, i.1]"));
  CHECK_THAT(nest, Catch::Contains("func kiln_matmul(A: f32[16, 4], B: f32[4, 8], C: f32[16, 8])"));

  // Vectorized along the last axis, the same buffers keep their order.
  schedule::State t(test::matmul_dag(16, 8, 4));
  t.cache_write("C");
  t.cache_read("B", "C.local");
  t.vectorize("C.local", "j");
  std::string plain = schedule::to_string(schedule::lower(t));
  INFO(plain);
  CHECK_THAT(plain, Catch::Contains("allocate B.cache: f32[4, 8] (heap)"));
  CHECK_THAT(plain, Catch::Contains("allocate C.local: f32[16, 8] (heap)"));
}

TEST_CASE("the trace sees every lowering pass in order, and the last nest is the result",
          "[schedule][lower][trace]") {
  schedule::State s(test::matmul_dag(8, 8, 4));
  s.split("C", "j", {4});
  s.pragma_auto_unroll("C", 16);
  std::vector<std::string> passes, nests;
  schedule::LowerOptions options;
  options.trace = [&](std::string_view pass, const schedule::Stmt& nest) {
    passes.emplace_back(pass);
    nests.push_back(schedule::to_string(nest));
  };
  schedule::LoweredFunc f = schedule::lower(s, options);
  const std::vector<std::string> all = {"build_nest", "mark_auto_unroll", "vector_dims_innermost",
                                        "unroll_loops", "simplify"};
  REQUIRE(passes == all);
  CHECK(nests.back() == schedule::to_string(f.body));
  // The pragma marks the small inner loop, and unrolling expands it.
  CHECK_THAT(nests[0], !Catch::Contains("unrolled for"));
  CHECK_THAT(nests[1], Catch::Contains("unrolled for k in 0..4"));
  CHECK_THAT(nests[3], !Catch::Contains("for k"));
  CHECK_THAT(nests[4], Catch::Contains("A[i, 3] * B[3, j.0 * 4 + j.1]"));

  // Without expansion the last two passes do not run.
  passes.clear();
  options.expand_unrolled = false;
  schedule::lower(s, options);
  CHECK(passes == std::vector<std::string>(all.begin(), all.begin() + 3));
}

TEST_CASE("auto_unroll of a stage also covers the stages computed inside it", "[schedule][lower]") {
  // C.local is computed at C's j.0: a pragma on C reaches C.local's loops,
  // a pragma on C.local does not reach C's.
  auto nest_for = [](const std::string& stage) {
    schedule::State s(test::matmul_dag(4, 16, 4));
    s.cache_write("C");
    s.split("C", "j", {4});
    s.reorder("C", {"i", "j.0", "j.1"});
    s.compute_at("C.local", "C", "j.0");
    s.pragma_auto_unroll(stage, 16);
    return schedule::to_string(schedule::lower(s, {.expand_unrolled = false}));
  };
  std::string outer = nest_for("C");
  INFO(outer);
  CHECK_THAT(outer, Catch::Contains("unrolled for C.local.k"));
  CHECK_THAT(outer, Catch::Contains("unrolled for j.1"));
  std::string inner = nest_for("C.local");
  INFO(inner);
  CHECK_THAT(inner, Catch::Contains("unrolled for C.local.k"));
  CHECK_THAT(inner, !Catch::Contains("unrolled for j.1"));
}

TEST_CASE("a constant input copied at the root is packed ahead, by the prepack function",
          "[schedule][lower][prepack]") {
  // C = A B with B constant (a layer's weights) and copied for C.local.
  auto dag_with_constant_b = [](bool constant) {
    ir::DAGBuilder b("matmul");
    auto A = b.input("A", {16, 4});
    auto B = constant ? b.constant_input("B", {4, 8}) : b.input("B", {4, 8});
    ir::IterVar k{"k", 4};
    b.output(b.compute("C", {{"i", 16}, {"j", 8}}, [&](const std::vector<ir::Expr>& v) {
      return ir::sum(A(v[0], ir::var(k)) * B(ir::var(k), v[1]), {k});
    }));
    return std::move(b).build();
  };
  auto schedule = [](const ir::ComputeDAG& dag, bool pack_at_root) {
    schedule::State s(dag);
    s.cache_write("C");
    s.cache_read("B", "C.local");
    s.split("C", "i", {4});
    s.compute_at("C.local", "C", "i.0");
    s.reorder("C.local", {"k", "i", "j"});
    s.vectorize("C.local", "j");
    if (!pack_at_root)
      s.compute_at("B.cache", "C.local", "k");
    return schedule::lower(s);
  };

  schedule::LoweredFunc packed = schedule(dag_with_constant_b(true), true);
  std::string text = schedule::to_string(packed);
  INFO(text);
  REQUIRE(packed.has_prepack());
  REQUIRE(packed.args.size() == 4);
  CHECK(packed.args[3].name == "B.cache");
  CHECK(packed.args[3].scope == schedule::BufferScope::Packed);
  CHECK(packed.args[3].shape == std::vector<std::int64_t>{4, 8});
  // The prepack function writes the copy, the kernel only reads it.
  CHECK_THAT(schedule::to_string(packed.prepack),
             Catch::Contains("B.cache[ax0, ax1] = B[ax0, ax1]"));
  CHECK_THAT(schedule::to_string(packed.body), !Catch::Contains("B.cache[ax0, ax1] ="));
  CHECK_THAT(schedule::to_string(packed.body), Catch::Contains("B.cache[C.local.k, C.local.j]"));
  CHECK_THAT(text, Catch::StartsWith("prepack kiln_matmul(A: f32[16, 4], B: f32[4, 8], "
                                     "C: f32[16, 8], B.cache: f32[4, 8] (packed)) {\n"));
  CHECK_THAT(text, !Catch::Contains("allocate B.cache"));

  // A plain input is copied by the kernel, as is a constant one copied
  // inside the kernel's loops (per tile).
  for (auto [constant, at_root] : {std::pair{false, true}, std::pair{true, false}}) {
    schedule::LoweredFunc plain = schedule(dag_with_constant_b(constant), at_root);
    INFO(schedule::to_string(plain));
    CHECK_FALSE(plain.has_prepack());
    CHECK(plain.args.size() == 3);
    CHECK_THAT(schedule::to_string(plain.body), Catch::Contains("allocate B.cache"));
  }
}
