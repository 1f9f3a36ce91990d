#include "test_dags.h"

#include "kiln/ir/builder.h"
#include "kiln/ir/parser.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::ir;

TEST_CASE("matmul built in C++ equals matmul parsed from text", "[ir][builder]") {
  ComputeDAG built = test::matmul_dag(64, 32, 16);
  auto parsed = parse_op("op matmul\n"
                         "param M = 64\nparam N = 32\nparam K = 16\n"
                         "input A : f32[M, K]\n"
                         "input B : f32[K, N]\n"
                         "output C[i < M, j < N] = sum(A[i, k] * B[k, j] for k < K)\n",
                         "inline.kop");
  REQUIRE(parsed.ok());
  REQUIRE(parsed->to_string() == built.to_string());
  REQUIRE(parsed->workload_key() == built.workload_key());
  REQUIRE(parsed->params() == built.params());
}

TEST_CASE("the builder refuses invalid DAGs with user errors", "[ir][builder]") {
  DAGBuilder b("bad");
  auto A = b.input("A", {4, 4});
  REQUIRE_THROWS_AS(A(Expr(1)), UserError);
  REQUIRE_THROWS_AS(b.input("A", {4}), UserError);
  REQUIRE_THROWS_AS(b.input("Z", {0}), UserError);
  REQUIRE_THROWS_AS(b.compute("C", {{"i", 4}},
                              [&](const std::vector<Expr>& v) { return A(v[0], Var::make("q")); }),
                    UserError);
  auto C = b.compute("C", {{"i", 4}}, [&](const std::vector<Expr>& v) { return A(v[0], 0); });
  (void)C;
  // No output marked yet.
  REQUIRE_THROWS_AS(std::move(b).build(), UserError);
}
