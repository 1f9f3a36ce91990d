// Element types of tensors and expressions.
#ifndef KILN_IR_TYPE_H
#define KILN_IR_TYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::ir {

/// Scalar element types. Index arithmetic is I64; tensors are F32 first, and
/// F64 and I32 follow through the same paths.
enum class ScalarType : std::uint8_t { Bool, I32, I64, F32, F64 };

bool is_float(ScalarType t);
bool is_int(ScalarType t);
int bits(ScalarType t);
int bytes(ScalarType t);
/// "bool", "i32", "i64", "f32", "f64".
std::string_view type_name(ScalarType t);
std::optional<ScalarType> parse_type_name(std::string_view name);

} // namespace kiln::ir

#endif // KILN_IR_TYPE_H
