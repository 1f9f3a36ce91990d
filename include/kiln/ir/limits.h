// The size limits of an op. Parsing, printing, lowering and code generation
// walk expressions and statement nests recursively; these limits keep every
// such walk within a thread's stack, and make a hostile input a clear error
// instead of a stack overflow. Real operators are far inside them
// (docs/op-language.md, "Limits").
#ifndef KILN_IR_LIMITS_H
#define KILN_IR_LIMITS_H

#include <cstdint>

namespace kiln::ir {

/// Nesting depth of one expression: each operator, call, cast, tensor read
/// and pair of parentheses is a level, and `a + b + c` nests to the left.
inline constexpr std::uint32_t kMaxExprDepth = 256;
/// Nesting depth of a stage's body once the stages it reads are inlined
/// into it (compute_inline): a chain of inlined stages nests deeper than
/// any one of them.
inline constexpr std::uint32_t kMaxInlinedDepth = 4 * kMaxExprDepth;
/// Stages of one op, inputs included.
inline constexpr int kMaxStages = 512;
/// Dimensions of one tensor, and axes of one reduction.
inline constexpr int kMaxDimensions = 16;

} // namespace kiln::ir

#endif
