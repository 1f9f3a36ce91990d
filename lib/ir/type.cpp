#include "kiln/ir/type.h"

namespace kiln::ir {

bool is_float(ScalarType t) {
  return t == ScalarType::F32 || t == ScalarType::F64;
}

bool is_int(ScalarType t) {
  return t == ScalarType::I32 || t == ScalarType::I64;
}

int bits(ScalarType t) {
  switch (t) {
  case ScalarType::Bool:
    return 1;
  case ScalarType::I32:
  case ScalarType::F32:
    return 32;
  case ScalarType::I64:
  case ScalarType::F64:
    return 64;
  }
  return 0;
}

int bytes(ScalarType t) {
  return t == ScalarType::Bool ? 1 : bits(t) / 8;
}

std::string_view type_name(ScalarType t) {
  switch (t) {
  case ScalarType::Bool:
    return "bool";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  case ScalarType::F32:
    return "f32";
  case ScalarType::F64:
    return "f64";
  }
  return "?";
}

std::optional<ScalarType> parse_type_name(std::string_view name) {
  for (ScalarType t :
       {ScalarType::Bool, ScalarType::I32, ScalarType::I64, ScalarType::F32, ScalarType::F64})
    if (type_name(t) == name)
      return t;
  return std::nullopt;
}

} // namespace kiln::ir
