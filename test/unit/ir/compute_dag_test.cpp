#include "test_dags.h"

#include "kiln/ir/builder.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::ir;

TEST_CASE("matmul flop count is 2*M*N*K", "[ir][dag]") {
  REQUIRE(test::matmul_dag(8, 4, 2).flop_count() == 2.0 * 8 * 4 * 2);
}

TEST_CASE("arguments are inputs then outputs, producers and consumers", "[ir][dag]") {
  DAGBuilder b("dense_bias_relu");
  auto X = b.input("X", {2, 3});
  auto W = b.input("W", {4, 3});
  auto bias = b.input("bias", {4});
  IterVar k{"k", 3};
  auto D = b.compute("dense", {{"b", 2}, {"o", 4}}, [&](const std::vector<Expr>& v) {
    return sum(X(v[0], var(k)) * W(v[1], var(k)), {k});
  });
  auto B = b.compute("biased", {{"b", 2}, {"o", 4}},
                     [&](const std::vector<Expr>& v) { return D(v[0], v[1]) + bias(v[1]); });
  auto R = b.compute("out", {{"b", 2}, {"o", 4}},
                     [&](const std::vector<Expr>& v) { return max(B(v[0], v[1]), 0.0); });
  b.output(R);
  ComputeDAG dag = std::move(b).build();
  REQUIRE(dag.arguments() == std::vector<int>{0, 1, 2, 5});
  REQUIRE(dag.intermediates() == std::vector<int>{3, 4});
  REQUIRE(dag.producers(4) == std::vector<int>{2, 3});
  REQUIRE(dag.consumers(3) == std::vector<int>{4});
  // dense 2*2*4*3, bias add 8, relu max 8
  REQUIRE(dag.flop_count() == 2.0 * 2 * 4 * 3 + 8 + 8);
}

TEST_CASE("workload keys are stable and depend on shapes", "[ir][dag]") {
  std::string key = test::matmul_dag(8, 8, 8).workload_key();
  REQUIRE(key.rfind("matmul-", 0) == 0);
  REQUIRE(key.size() == std::string("matmul-").size() + 16);
  REQUIRE(key == test::matmul_dag(8, 8, 8).workload_key());
  REQUIRE(key != test::matmul_dag(8, 8, 16).workload_key());
}

TEST_CASE("a reduction inside an expression is refused", "[ir][dag]") {
  DAGBuilder b("bad");
  auto A = b.input("A", {4, 4});
  IterVar k{"k", 4};
  REQUIRE_THROWS_WITH(
      b.compute("C", {{"i", 4}},
                [&](const std::vector<Expr>& v) { return sum(A(v[0], var(k)), {k}) * 2; }),
      Catch::Contains("whole right-hand side"));
}
