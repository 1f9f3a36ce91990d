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
