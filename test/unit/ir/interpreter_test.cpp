#include "test_dags.h"

#include "kiln/ir/builder.h"
#include "kiln/ir/interpreter.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace kiln;
using namespace kiln::ir;

TEST_CASE("interpreter computes matmul exactly", "[ir][interpreter]") {
  ComputeDAG dag = test::matmul_dag(2, 3, 4);
  std::vector<double> a(8), bm(12);
  for (int i = 0; i < 8; ++i)
    a[i] = i + 1;
  for (int i = 0; i < 12; ++i)
    bm[i] = (i % 5) - 2;
  Interpreter interp(dag, {{"A", a}, {"B", bm}});
  std::vector<double> c = interp.evaluate(dag.find_stage("C"));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double want = 0;
      for (int k = 0; k < 4; ++k)
        want += a[i * 4 + k] * bm[k * 3 + j];
      REQUIRE(c[i * 3 + j] == want);
    }
}

TEST_CASE("interpreter: softmax rows sum to one, select skips the untaken read",
          "[ir][interpreter]") {
  DAGBuilder b("softmax");
  auto X = b.input("x", {2, 5});
  IterVar j{"j", 5};
  auto M = b.compute("maxv", {{"i", 2}},
                     [&](const std::vector<Expr>& v) { return reduce_max(X(v[0], var(j)), {j}); });
  auto E = b.compute("e", {{"i", 2}, {"j", 5}},
                     [&](const std::vector<Expr>& v) { return exp(X(v[0], v[1]) - M(v[0])); });
  auto S = b.compute("s", {{"i", 2}},
                     [&](const std::vector<Expr>& v) { return sum(E(v[0], var(j)), {j}); });
  auto Y = b.compute("y", {{"i", 2}, {"j", 5}},
                     [&](const std::vector<Expr>& v) { return E(v[0], v[1]) / S(v[0]); });
  b.output(Y);
  // A padded copy: reads x[i, j-1] only where it is in bounds.
  auto P = b.compute("pad", {{"i", 2}, {"j", 7}}, [&](const std::vector<Expr>& v) {
    return select(logical_and(v[1] >= 1, v[1] < 6), X(v[0], v[1] - 1), 0.0);
  });
  b.output(P);
  ComputeDAG dag = std::move(b).build();
  Interpreter interp(dag, {{"x", {1, 2, 3, 4, 5, -1, 0, 1, 0, -1}}});
  std::vector<double> y = interp.evaluate(dag.find_stage("y"));
  for (int i = 0; i < 2; ++i) {
    double total = 0;
    for (int k = 0; k < 5; ++k)
      total += y[i * 5 + k];
    REQUIRE(total == Approx(1.0));
  }
  REQUIRE(y[4] == Approx(std::exp(0.0) /
                         (1 + std::exp(-1.0) + std::exp(-2.0) + std::exp(-3.0) + std::exp(-4.0))));
  std::vector<double> p = interp.evaluate(dag.find_stage("pad"));
  REQUIRE(p == std::vector<double>{0, 1, 2, 3, 4, 5, 0, 0, -1, 0, 1, 0, -1, 0});
}

TEST_CASE("interpreter: integer division floors, reads out of bounds are user errors",
          "[ir][interpreter]") {
  DAGBuilder b("idx");
  auto A = b.input("A", {4});
  auto D = b.compute("d", {{"i", 4}}, [&](const std::vector<Expr>& v) {
    return cast(ScalarType::F32, (v[0] - 3) / 2) + cast(ScalarType::F32, (v[0] - 3) % 2);
  });
  // (i + 1) % 5 is not affine: no static check judges it; the interpreter
  // refuses the read of A[4] at i = 3.
  auto O =
      b.compute("o", {{"i", 4}}, [&](const std::vector<Expr>& v) { return A((v[0] + 1) % 5); });
  b.output(D);
  b.output(O);
  ComputeDAG dag = std::move(b).build();
  Interpreter interp(dag, {{"A", {1, 2, 3, 4}}});
  // i-3 = -3,-2,-1,0 -> floor/2 = -2,-1,-1,0 ; floor mod 2 = 1,0,1,0
  REQUIRE(interp.evaluate(dag.find_stage("d")) == std::vector<double>{-1, -1, 0, 0});
  REQUIRE_THROWS_WITH(interp.evaluate(dag.find_stage("o")), Catch::Contains("reads A[4]"));
}

TEST_CASE("interpreter input errors name the input", "[ir][interpreter]") {
  ComputeDAG dag = test::matmul_dag(2, 2, 2);
  try {
    Interpreter bad(dag, {{"A", {1, 2, 3, 4}}});
    FAIL("a missing input must be refused");
  } catch (const UserError& e) {
    REQUIRE(e.error().id() == "missing-input");
  }
  try {
    Interpreter bad(dag, {{"A", {1, 2, 3}}, {"B", {1, 2, 3, 4}}});
    FAIL("a short input must be refused");
  } catch (const UserError& e) {
    REQUIRE(e.error().id() == "bad-input-size");
  }
  DAGBuilder b("oob");
  auto A = b.input("A", {2});
  // Not affine (a modulo), so the static check leaves it to the interpreter.
  auto O = b.compute("o", {{"i", 2}}, [&](const std::vector<Expr>& v) { return A(v[0] * 2 % 3); });
  b.output(O);
  ComputeDAG oob = std::move(b).build();
  Interpreter interp(oob, {{"A", {1, 2}}});
  try {
    interp.evaluate(oob.find_stage("o"));
    FAIL("an out-of-bounds read must be refused");
  } catch (const UserError& e) {
    REQUIRE(e.error().id() == "out-of-bounds");
  }
}
