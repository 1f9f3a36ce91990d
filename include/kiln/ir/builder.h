// Building a compute DAG in C++, the way a compiler backend does it:
//
//   ir::DAGBuilder b("matmul");
//   auto A = b.input("A", {M, K});
//   auto B = b.input("B", {K, N});
//   ir::IterVar k{"k", K};
//   auto C = b.compute("C", {{"i", M}, {"j", N}}, [&](const std::vector<ir::Expr>& v) {
//     return ir::sum(A(v[0], ir::var(k)) * B(ir::var(k), v[1]), {k});
//   });
//   b.output(C);
//   ir::ComputeDAG dag = std::move(b).build();
//
// The result equals the DAG parsed from the same op text (same workload key).
#ifndef KILN_IR_BUILDER_H
#define KILN_IR_BUILDER_H

#include "kiln/ir/compute_dag.h"

#include <functional>
#include <string>
#include <vector>

namespace kiln::ir {

/// A stage seen from the builder: something that can be indexed.
struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  ScalarType dtype = ScalarType::F32;

  Expr operator()(std::vector<Expr> indices) const;
  template <typename... I> Expr operator()(I... indices) const {
    return (*this)(std::vector<Expr>{Expr(indices)...});
  }
};

class DAGBuilder {
public:
  explicit DAGBuilder(std::string op_name);

  Tensor input(std::string name, std::vector<std::int64_t> shape,
               ScalarType dtype = ScalarType::F32);
  /// An input whose values stay the same from call to call (`const input`).
  Tensor constant_input(std::string name, std::vector<std::int64_t> shape,
                        ScalarType dtype = ScalarType::F32);
  /// A compute stage; `body` receives one variable per axis. Its type is the
  /// body's type.
  Tensor compute(std::string name, std::vector<IterVar> axes,
                 const std::function<Expr(const std::vector<Expr>&)>& body);
  void output(const Tensor& t);
  /// Records a parameter (for display and records; does not change the DAG).
  void param(std::string name, std::int64_t value);

  /// Validates; throws UserError when the stages are not a valid DAG.
  ComputeDAG build() &&;

private:
  std::string name_;
  std::vector<Stage> stages_;
  std::vector<Param> params_;
};

} // namespace kiln::ir

#endif // KILN_IR_BUILDER_H
