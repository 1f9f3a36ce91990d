// One printer for expressions and DAGs: dumps, logs, error messages and the
// canonical text behind workload keys all use it. Output is valid op-language
// syntax, deterministic, with parentheses only where precedence needs them.
#ifndef KILN_IR_PRINTER_H
#define KILN_IR_PRINTER_H

#include "kiln/ir/expr.h"

#include <iosfwd>
#include <string>

namespace kiln::ir {

class ComputeDAG;

std::string to_string(const Expr& e);
/// The DAG as op-language text with concrete shapes (no parameters).
std::string to_string(const ComputeDAG& dag);
/// A float literal that reads back to the same double.
std::string format_float(double value);

std::ostream& operator<<(std::ostream& os, const Expr& e);

} // namespace kiln::ir

#endif // KILN_IR_PRINTER_H
