// Small DAGs built with the C++ API, shared by the ir tests.
#ifndef KILN_TEST_UNIT_IR_TEST_DAGS_H
#define KILN_TEST_UNIT_IR_TEST_DAGS_H

#include "kiln/ir/builder.h"

namespace kiln::test {

inline ir::ComputeDAG matmul_dag(std::int64_t M, std::int64_t N, std::int64_t K) {
  ir::DAGBuilder b("matmul");
  b.param("M", M);
  b.param("N", N);
  b.param("K", K);
  auto A = b.input("A", {M, K});
  auto B = b.input("B", {K, N});
  ir::IterVar k{"k", K};
  auto C = b.compute("C", {{"i", M}, {"j", N}}, [&](const std::vector<ir::Expr>& v) {
    return ir::sum(A(v[0], ir::var(k)) * B(ir::var(k), v[1]), {k});
  });
  b.output(C);
  return std::move(b).build();
}

} // namespace kiln::test

#endif
