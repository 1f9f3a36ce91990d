// Expressions, lowest precedence first: || && comparisons + - * / % unary
// primaries, then names, tensor reads, calls of the language's functions and
// reductions.
#include "op_parser.h"

#include "kiln/ir/printer.h"

#include <fmt/format.h>

#include <limits>

namespace kiln::ir::parse {

static bool is_compare(TokenKind k) {
  return k == TokenKind::EQ || k == TokenKind::NE || k == TokenKind::LT || k == TokenKind::LE ||
         k == TokenKind::GT || k == TokenKind::GE;
}

static CompareOp compare_op(TokenKind k) {
  switch (k) {
  case TokenKind::EQ:
    return CompareOp::EQ;
  case TokenKind::NE:
    return CompareOp::NE;
  case TokenKind::LT:
    return CompareOp::LT;
  case TokenKind::LE:
    return CompareOp::LE;
  case TokenKind::GT:
    return CompareOp::GT;
  case TokenKind::GE:
    return CompareOp::GE;
  default:
    kiln_unreachable("not a comparison token");
  }
}

/// What kind of call a function of the language makes.
enum class Function : std::uint8_t { Math, MinMax, Select, Cast, Sum };

struct FunctionInfo {
  std::string_view name;
  Function kind;
  int arity;
};

static constexpr FunctionInfo functions[] = {
    {"exp", Function::Math, 1},   {"log", Function::Math, 1},   {"sqrt", Function::Math, 1},
    {"abs", Function::Math, 1},   {"erf", Function::Math, 1},   {"tanh", Function::Math, 1},
    {"min", Function::MinMax, 2}, {"max", Function::MinMax, 2}, {"select", Function::Select, 3},
    {"if", Function::Select, 3},  {"f32", Function::Cast, 1},   {"f64", Function::Cast, 1},
    {"i32", Function::Cast, 1},   {"i64", Function::Cast, 1},   {"sum", Function::Sum, 1},
};

static const FunctionInfo* find_function(std::string_view name) {
  for (const FunctionInfo& f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

static std::vector<std::string> function_names() {
  std::vector<std::string> names;
  for (const FunctionInfo& f : functions)
    names.emplace_back(f.name);
  return names;
}

static constexpr std::string_view function_list =
    "exp, log, sqrt, abs, erf, tanh, min, max, select (or if), the casts f32, f64, i32, i64 and "
    "the "
    "reductions sum, max, min";

bool is_function(std::string_view name) {
  return find_function(name) != nullptr;
}

Expr Parser::parse_expr() {
  return parse_or();
}

void Parser::too_deep(const Token& at) const {
  fail(at, "limit-exceeded",
       fmt::format("the expression nests more than {} levels deep here (each operator, call, "
                   "tensor read and pair of parentheses is a level, and a chain 'a + b + c' "
                   "nests a level per term); compute parts of it in stages of their own",
                   kMaxExprDepth));
}

Expr Parser::parse_or() {
  Expr e = parse_and();
  while (peek().is(TokenKind::OrOr)) {
    Token op = take();
    Expr r = parse_and();
    e = build(op, [&] { return logical_or(e, r); });
  }
  return e;
}

Expr Parser::parse_and() {
  Expr e = parse_compare();
  while (peek().is(TokenKind::AndAnd)) {
    Token op = take();
    Expr r = parse_compare();
    e = build(op, [&] { return logical_and(e, r); });
  }
  return e;
}

Expr Parser::parse_compare() {
  Expr e = parse_additive();
  if (!is_compare(peek().kind))
    return e;
  Token op = take();
  Expr r = parse_additive();
  if (is_compare(peek().kind))
    fail(peek(), "syntax-error",
         fmt::format("comparisons do not chain; write 'a {} b && b {} c' instead of "
                     "'a {} b {} c'",
                     op.text, peek().text, op.text, peek().text));
  return build(op, [&] { return Compare::make(compare_op(op.kind), e, r); });
}

Expr Parser::parse_additive() {
  Expr e = parse_multiplicative();
  while (peek().is(TokenKind::Plus) || peek().is(TokenKind::Minus)) {
    Token op = take();
    std::size_t rhs = mark();
    Expr r = parse_multiplicative();
    e = make_binary(op, op.is(TokenKind::Plus) ? BinaryOp::Add : BinaryOp::Sub, e, r, rhs);
  }
  return e;
}

Expr Parser::parse_multiplicative() {
  Expr e = parse_unary();
  while (peek().is(TokenKind::Star) || peek().is(TokenKind::Slash) ||
         peek().is(TokenKind::Percent)) {
    Token op = take();
    std::size_t rhs = mark();
    Expr r = parse_unary();
    BinaryOp kind = op.is(TokenKind::Star)    ? BinaryOp::Mul
                    : op.is(TokenKind::Slash) ? BinaryOp::Div
                                              : BinaryOp::Mod;
    e = make_binary(op, kind, e, r, rhs);
  }
  return e;
}

Expr Parser::parse_unary() {
  const Token& t = peek();
  NestingGuard guard(*this, t);
  if (t.is(TokenKind::Bang)) {
    Token op = take();
    Expr e = parse_unary();
    return build(op, [&] { return logical_not(e); });
  }
  if (!t.is(TokenKind::Minus))
    return parse_primary();
  Token op = take();
  // -9223372036854775808 is a literal, though 9223372036854775808 is not.
  const Token& next = peek();
  if (next.is(TokenKind::Integer)) {
    Token literal = take();
    return IntImm::make(literal_value(literal, true));
  }
  Expr e = parse_unary();
  if (e.type() == ScalarType::Bool)
    fail(op, "type-error",
         fmt::format("unary '-' needs a number, but '{}' is a condition (bool); use '!' to "
                     "negate a condition",
                     to_string(e)));
  if (is_constant(e) && constant_value(e) == std::numeric_limits<std::int64_t>::min())
    fail(op, "integer-overflow",
         "integer overflow: -(-9223372036854775808) does not fit in 64 "
         "bits; use smaller values");
  return build(op, [&] { return -e; });
}

Expr Parser::parse_primary() {
  const Token t = peek();
  switch (t.kind) {
  case TokenKind::Integer:
    take();
    return IntImm::make(literal_value(t, false));
  case TokenKind::Float:
    take();
    return FloatImm::make(t.float_value);
  case TokenKind::LParen: {
    open(TokenKind::LParen, "");
    Expr e = parse_expr();
    close(TokenKind::RParen, "to close the parenthesis");
    return e;
  }
  case TokenKind::Identifier:
    return parse_name();
  default:
    break;
  }
  std::string hint;
  if (t.is(TokenKind::Newline))
    hint = "; a statement ends at the end of the line (wrap a long expression in parentheses "
           "to continue it)";
  fail(t, "syntax-error", fmt::format("expected an expression, found {}{}", describe(t), hint));
}

Expr Parser::parse_name() {
  const Token t = take();
  if (t.is_word("inf"))
    return FloatImm::make(std::numeric_limits<double>::infinity());
  if (is_keyword(t.text))
    fail(t, "syntax-error", fmt::format("expected an expression, found keyword '{}'", t.text));
  if (peek().is(TokenKind::LParen))
    return parse_call(t);
  if (peek().is(TokenKind::LBracket))
    return parse_load(t);
  return resolve(t);
}

// NAME[INDEX, ...]
Expr Parser::parse_load(const Token& name) {
  if (context_ == Context::Constant)
    fail(name, "non-constant",
         fmt::format("{} must be a constant, so it cannot read the tensor '{}'; use integer "
                     "literals, params and lets",
                     constant_what_, name.text));
  const Stage& tensor = resolve_tensor(name);
  open(TokenKind::LBracket, "");
  std::vector<Expr> indices;
  if (!peek().is(TokenKind::RBracket)) {
    while (true) {
      std::size_t begin = mark();
      Expr index = parse_expr();
      if (!is_int(index.type()))
        fail(tokens_[begin], "type-error",
             fmt::format("index {} of '{}' is '{}' of type {}; indices must be integers (i32(x) "
                         "truncates a float)",
                         indices.size(), name.text, text_of(begin, pos_), type_name(index.type())));
      indices.push_back(index);
      if (!accept(TokenKind::Comma))
        break;
    }
  }
  close(TokenKind::RBracket, fmt::format("to end the indices of '{}'", name.text));
  if (indices.size() != tensor.axes.size())
    fail(name, "wrong-index-count",
         fmt::format("'{}' has {} dimension{} ({}) but is read with {} ind{}; give one index "
                     "per dimension",
                     name.text, tensor.axes.size(), tensor.axes.size() == 1 ? "" : "s",
                     shape_text(tensor), indices.size(), indices.size() == 1 ? "ex" : "ices"));
  return build(name, [&] { return Load::make(tensor.name, indices, tensor.dtype); });
}

// NAME(ARG, ...), including reductions NAME(EXPR for AXIS < EXTENT, ...)
Expr Parser::parse_call(const Token& name) {
  const FunctionInfo* f = find_function(name.text);
  if (!f)
    unknown_function(name);
  if (f->kind == Function::Sum || (f->kind == Function::MinMax && find_for() != 0))
    return parse_reduction(name);
  if (context_ == Context::Constant && f->kind != Function::MinMax)
    fail(name, "non-constant",
         fmt::format("{} must be a constant integer, so it cannot call '{}'; use integer "
                     "literals, params and lets with + - * / % min max",
                     constant_what_, name.text));
  open(TokenKind::LParen, "");
  std::vector<Expr> args;
  std::size_t rhs = 0;
  if (!peek().is(TokenKind::RParen)) {
    while (true) {
      rhs = mark();
      args.push_back(parse_expr());
      if (!accept(TokenKind::Comma))
        break;
    }
  }
  close(TokenKind::RParen, fmt::format("to end the arguments of '{}'", name.text));
  if (static_cast<int>(args.size()) != f->arity)
    fail(name, "wrong-argument-count",
         fmt::format("'{}' takes {} argument{}, but {} {} given{}", name.text, f->arity,
                     f->arity == 1 ? "" : "s", args.size(), args.size() == 1 ? "is" : "are",
                     f->kind == Function::MinMax
                         ? fmt::format("; for a reduction write {}(EXPR for k < K)", name.text)
                         : ""));
  return make_call(name, *f, args, rhs);
}

Expr Parser::make_call(const Token& name, const FunctionInfo& f, const std::vector<Expr>& args,
                       std::size_t rhs) {
  switch (f.kind) {
  case Function::Math: {
    Intrinsic fn = name.text == "exp"    ? Intrinsic::Exp
                   : name.text == "log"  ? Intrinsic::Log
                   : name.text == "sqrt" ? Intrinsic::Sqrt
                   : name.text == "erf"  ? Intrinsic::Erf
                   : name.text == "tanh" ? Intrinsic::Tanh
                                         : Intrinsic::Abs;
    return build(name, [&] { return Call::make(fn, {args[0]}); });
  }
  case Function::MinMax:
    return make_binary(name, name.text == "min" ? BinaryOp::Min : BinaryOp::Max, args[0], args[1],
                       rhs);
  case Function::Select:
    return build(name, [&] { return select(args[0], args[1], args[2]); });
  case Function::Cast:
    return build(name, [&] { return cast(*parse_type_name(name.text), args[0]); });
  case Function::Sum:
    break;
  }
  kiln_unreachable("reductions are parsed by parse_reduction");
}

void Parser::unknown_function(const Token& name) const {
  const Global* g = find_global(name.text);
  if (g && g->kind == Global::Tensor)
    fail(name, "unknown-function",
         fmt::format("'{}' is a tensor, not a function; read it with square brackets, e.g. "
                     "{}[{}]",
                     name.text, name.text, example_indices(stage_of(*g))));
  fail(name, "unknown-function",
       fmt::format("unknown function '{}';{} the functions are {}", name.text,
                   suggestion(name.text, function_names()), function_list));
}

std::size_t Parser::find_for() {
  int depth = 0;
  for (std::size_t i = mark(); i < tokens_.size(); ++i) {
    const Token& t = tokens_[i];
    if (t.is(TokenKind::End) || starts_statement(t))
      return 0;
    if (t.is(TokenKind::LParen) || t.is(TokenKind::LBracket))
      ++depth;
    if ((t.is(TokenKind::RParen) || t.is(TokenKind::RBracket)) && --depth == 0)
      return 0;
    if (depth == 1 && t.is_word("for"))
      return i;
  }
  return 0;
}

// sum|max|min(BODY for AXIS < EXTENT, ...). The axes come after the body
// in the text but are parsed first, so that the body sees them.
Expr Parser::parse_reduction(const Token& name) {
  if (context_ == Context::Constant)
    fail(name, "non-constant",
         fmt::format("{} must be a constant integer, so it cannot be a reduction; reductions "
                     "are the bodies of stages",
                     constant_what_));
  if (reduction_depth_ > 0)
    fail(name, "nested-reduction",
         fmt::format("reductions cannot be nested; compute the inner {}(...) in a stage of its "
                     "own and read it here",
                     name.text));
  if (body_reduction_)
    fail(name, "reduction-not-top-level",
         fmt::format("a stage body holds at most one reduction, as its whole right-hand side "
                     "(there is one at {}); compute each reduction in a stage of its own",
                     where(*body_reduction_)));
  std::size_t for_index = find_for();
  open(TokenKind::LParen, "");
  if (for_index == 0) {
    parse_expr();
    fail(peek(), "syntax-error",
         fmt::format("expected 'for' and the reduction axes in {}(...), e.g. {}(A[i, k] for k "
                     "< K), found {}",
                     name.text, name.text, describe(peek())));
  }
  std::size_t body_index = pos_;
  pos_ = for_index + 1;
  std::size_t outer_axes = axes_.size();
  std::vector<IterVar> axes = parse_reduction_axes(name);
  std::size_t after_axes = pos_;
  pos_ = body_index;
  ++reduction_depth_;
  Expr body = parse_expr();
  --reduction_depth_;
  if (mark() != for_index)
    fail(peek(), "syntax-error",
         fmt::format("expected 'for' after the body of {}(...), found {}", name.text,
                     describe(peek())));
  pos_ = after_axes;
  close(TokenKind::RParen, fmt::format("to end {}(...)", name.text));
  axes_.resize(outer_axes);
  body_reduction_ = name;
  ReduceOp op = name.text == "sum"   ? ReduceOp::Sum
                : name.text == "max" ? ReduceOp::Max
                                     : ReduceOp::Min;
  return build(name, [&] { return Reduce::make(op, body, axes); });
}

std::vector<IterVar> Parser::parse_reduction_axes(const Token& name) {
  std::vector<IterVar> axes;
  while (true) {
    if (axes.size() == static_cast<std::size_t>(kMaxDimensions))
      fail(peek(), "limit-exceeded",
           fmt::format("{}(...) has more than {} reduction axes; a reduction has at most {}",
                       name.text, kMaxDimensions, kMaxDimensions));
    Token axis = expect_name(
        fmt::format("a reduction axis 'NAME < EXTENT' after 'for' in {}(...)", name.text));
    expect(TokenKind::LT, fmt::format("and the extent after reduction axis '{}'", axis.text));
    std::int64_t extent = parse_extent(fmt::format("reduction axis '{}'", axis.text), true);
    declare_axis(axis, true);
    axes.push_back(IterVar{std::string(axis.text), extent});
    if (!accept(TokenKind::Comma))
      return axes;
  }
}

} // namespace kiln::ir::parse
