// The op language (docs/op-language.md): parse an operator file into a
// compute DAG, with its integer parameters set from defaults or overrides.
#ifndef KILN_IR_PARSER_H
#define KILN_IR_PARSER_H

#include "kiln/ir/compute_dag.h"
#include "kiln/support/error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::ir {

/// `--set NAME=VALUE` overrides, as the user typed them (the value is checked
/// by the parser, so a bad one gets a proper error).
using ParamOverrides = std::vector<std::pair<std::string, std::string>>;

/// A parameter an op file declares.
struct ParamDecl {
  std::string name;
  std::int64_t default_value = 0;
  bool derived = false; ///< `let`: computed from others, cannot be set
};

/// Parses op text. `filename` is used in error messages only.
Expected<ComputeDAG> parse_op(std::string_view text, std::string_view filename,
                              const ParamOverrides& overrides = {});
/// Reads and parses an op file.
Expected<ComputeDAG> parse_op_file(const std::string& path, const ParamOverrides& overrides = {});
/// The parameters declared in op text, with defaults, in order.
Expected<std::vector<ParamDecl>> parse_op_params(std::string_view text, std::string_view filename);

/// Splits "NAME=VALUE" as given to --set; an Error when there is no '='.
Expected<std::pair<std::string, std::string>> parse_override(std::string_view text);

} // namespace kiln::ir

#endif // KILN_IR_PARSER_H
