// Constant integers in the parser: literals, arithmetic on constants folded
// as it is parsed (with its overflow and division-by-zero errors, and the
// type check of its operands), constant expressions and extents.
#include "op_parser.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace kiln::ir::parse {

bool is_constant(const Expr& e) {
  const auto* i = e.as<IntImm>();
  return i && i->type == ScalarType::I64;
}

std::int64_t constant_value(const Expr& e) {
  return e.as<IntImm>()->value;
}

std::int64_t Parser::literal_value(const Token& literal, bool negative) const {
  constexpr std::uint64_t max = std::numeric_limits<std::int64_t>::max();
  if (literal.int_value > max + (negative ? 1 : 0))
    fail(literal, "integer-overflow",
         fmt::format("integer literal '{}' does not fit in 64 bits; integers range from "
                     "-9223372036854775808 to 9223372036854775807",
                     literal.text));
  if (literal.int_value == max + 1)
    return std::numeric_limits<std::int64_t>::min();
  auto v = static_cast<std::int64_t>(literal.int_value);
  return negative ? -v : v;
}

std::int64_t Parser::parse_constant(std::string what, bool full_expression) {
  Context saved = context_;
  std::string saved_what = std::move(constant_what_);
  context_ = Context::Constant;
  constant_what_ = std::move(what);
  std::size_t begin = mark();
  Expr e = full_expression ? parse_expr() : parse_additive();
  std::size_t end = pos_;
  if (!is_constant(e)) {
    std::string text = text_of(begin, end);
    if (!is_int(e.type()))
      fail(tokens_[begin], "type-error",
           fmt::format("{} must be an integer, but '{}' has type {}", constant_what_, text,
                       type_name(e.type())));
    fail(tokens_[begin], "non-constant",
         fmt::format("{} must be a constant integer, but '{}' is not; use integer literals, "
                     "params and lets with + - * / % min max",
                     constant_what_, text));
  }
  context_ = saved;
  constant_what_ = std::move(saved_what);
  return constant_value(e);
}

std::int64_t Parser::parse_extent(const std::string& what, bool reduction) {
  std::size_t begin = mark();
  std::int64_t extent = parse_constant(fmt::format("the extent of {}", what), false);
  if (extent > 0)
    return extent;
  std::size_t end = pos_;
  std::string values = values_in(begin, end);
  std::string shown = values.empty()
                          ? std::to_string(extent)
                          : fmt::format("{} ('{}', where {})", extent, text_of(begin, end), values);
  if (reduction)
    fail(tokens_[begin], "empty-reduction",
         fmt::format("{} has extent {}; the reduction would be empty, and extents must be "
                     "positive",
                     what, shown));
  fail(tokens_[begin], "nonpositive-extent",
       fmt::format("{} has extent {}; extents must be positive", what, shown));
}

Expr Parser::make_binary(const Token& op, BinaryOp kind, const Expr& a, const Expr& b,
                         std::size_t rhs) {
  if (is_constant(a) && is_constant(b))
    return IntImm::make(fold(op, kind, constant_value(a), constant_value(b), rhs));
  for (const Expr& x : {a, b})
    if (x.type() == ScalarType::Bool)
      fail(op, "type-error",
           fmt::format("'{}' needs numbers, but '{}' is a condition (bool); to use a condition "
                       "as a number, write select(cond, 1.0, 0.0)",
                       op.text, to_string(x)));
  Expr e = build(op, [&] { return Binary::make(kind, a, b); });
  const auto* bin = e.as<Binary>();
  bool divides = bin && (kind == BinaryOp::Div || kind == BinaryOp::Mod);
  if (divides && is_int(e.type()) && bin->b.as<IntImm>() && bin->b.as<IntImm>()->value == 0)
    division_by_zero(op, rhs);
  return e;
}

void Parser::division_by_zero(const Token& op, std::size_t rhs) const {
  std::string values = values_in(rhs, pos_);
  fail(op, "division-by-zero",
       fmt::format("integer division by zero: the divisor '{}' is 0{}; change the divisor{}",
                   text_of(rhs, pos_), values.empty() ? "" : " (" + values + ")",
                   values.empty() ? "" : " or the parameters"));
}

std::int64_t Parser::fold(const Token& op, BinaryOp kind, std::int64_t a, std::int64_t b,
                          std::size_t rhs) const {
  std::int64_t r = 0;
  bool overflow = false;
  switch (kind) {
  case BinaryOp::Add:
    overflow = __builtin_add_overflow(a, b, &r);
    break;
  case BinaryOp::Sub:
    overflow = __builtin_sub_overflow(a, b, &r);
    break;
  case BinaryOp::Mul:
    overflow = __builtin_mul_overflow(a, b, &r);
    break;
  case BinaryOp::Div:
  case BinaryOp::Mod:
    if (b == 0)
      division_by_zero(op, rhs);
    overflow = a == std::numeric_limits<std::int64_t>::min() && b == -1;
    if (!overflow)
      r = kind == BinaryOp::Div ? floor_div(a, b) : floor_mod(a, b);
    break;
  case BinaryOp::Min:
    r = std::min(a, b);
    break;
  case BinaryOp::Max:
    r = std::max(a, b);
    break;
  }
  if (overflow)
    fail(op, "integer-overflow",
         fmt::format("integer overflow: {} {} {} does not fit in 64 bits; use smaller values", a,
                     binary_op_name(kind), b));
  return r;
}

} // namespace kiln::ir::parse
