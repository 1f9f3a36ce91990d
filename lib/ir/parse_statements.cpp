// The statements of an op file: op, input, stage and output (param and let
// are in parse_params.cpp), and the types of stage bodies.
#include "op_parser.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::ir::parse {

static bool is_tensor_type(ScalarType t) {
  return t == ScalarType::F32 || t == ScalarType::F64 || t == ScalarType::I32;
}

void Parser::parse_file() {
  skip_newlines();
  const Token& first = peek();
  if (!first.is_word("op"))
    fail(first, "missing-op",
         fmt::format("expected 'op NAME' as the first statement, found {}; an op file starts "
                     "by naming its operator, e.g. 'op matmul'",
                     describe(first)));
  parse_op_name();
  while (true) {
    skip_newlines();
    if (peek().is(TokenKind::End))
      break;
    parse_statement();
  }
  if (mode_ == Mode::ParamsOnly)
    return;
  check_overrides_used();
  bool has_output = std::any_of(result_.stages.begin(), result_.stages.end(),
                                [](const Stage& s) { return s.is_output; });
  if (!has_output)
    fail(op_token_, "no-output",
         fmt::format("op '{}' has no output; declare its result with 'output NAME[...] = "
                     "EXPR' (an output is a stage that the caller receives)",
                     result_.name));
}

void Parser::parse_op_name() {
  take();
  op_token_ = expect_name("the op's name after 'op'");
  result_.name = std::string(op_token_.text);
  end_statement("the op's name");
}

void Parser::parse_statement() {
  const Token& t = peek();
  if (t.is_word("param"))
    return parse_param();
  if (t.is_word("let"))
    return parse_let();
  if (mode_ == Mode::ParamsOnly)
    return skip_statement();
  if (t.is_word("input"))
    return parse_input(false);
  if (t.is_word("const")) {
    take();
    if (!peek().is_word("input"))
      fail(peek(), "syntax-error",
           fmt::format("expected 'input' after 'const' (a constant input: 'const input W : "
                       "f32[K, N]'), found {}",
                       describe(peek())));
    return parse_input(true);
  }
  if (t.is_word("stage"))
    return parse_compute(false);
  if (t.is_word("output"))
    return parse_compute(true);
  if (t.is_word("op"))
    fail(t, "duplicate-op",
         fmt::format("the op is already named '{}' at {}; a file defines one op, so remove "
                     "this 'op' statement",
                     result_.name, where(op_token_)));
  std::string hint;
  if (t.is(TokenKind::Identifier) && tokens_[pos_ + 1].is(TokenKind::LBracket))
    hint = fmt::format("; to define '{}', start the line with 'stage' or 'output'", t.text);
  fail(t, "syntax-error",
       fmt::format(
           "expected a statement (param, let, input, const input, stage or output), found {}{}",
           describe(t), hint));
}

void Parser::skip_statement() {
  int depth = 0;
  for (; !tokens_[pos_].is(TokenKind::End); ++pos_) {
    const Token& t = tokens_[pos_];
    if (t.is(TokenKind::LParen) || t.is(TokenKind::LBracket))
      ++depth;
    if ((t.is(TokenKind::RParen) || t.is(TokenKind::RBracket)) && depth > 0)
      --depth;
    if (t.is(TokenKind::Newline) && depth == 0)
      return;
  }
}

ScalarType Parser::parse_type(std::string_view context) {
  Token t = expect_name(fmt::format("a type (f32, f64 or i32) {}", context));
  std::optional<ScalarType> type = parse_type_name(t.text);
  if (type && is_tensor_type(*type))
    return *type;
  if (type)
    fail(t, "unknown-type",
         fmt::format("'{}' is not a tensor element type; tensors hold f32, f64 or i32", t.text));
  fail(t, "unknown-type",
       fmt::format("unknown type '{}';{} tensors hold f32, f64 or i32", t.text,
                   suggestion(t.text, {"f32", "f64", "i32"})));
}

void Parser::check_stage_count(const Token& name) const {
  if (result_.stages.size() == static_cast<std::size_t>(kMaxStages))
    fail(name, "limit-exceeded",
         fmt::format("'{}' would be stage {} of the op; an op has at most {} stages (inputs "
                     "included)",
                     name.text, kMaxStages + 1, kMaxStages));
}

// [const] input NAME : TYPE[EXTENT, ...]
void Parser::parse_input(bool constant) {
  take();
  Token name = expect_name("an input name after 'input'");
  check_stage_count(name);
  current_ = Stage{};
  current_.kind = StageKind::Placeholder;
  current_.is_constant = constant;
  current_.name = std::string(name.text);
  current_.where = source_.location(name);
  declare(name, Global{Global::Tensor, name, 0, static_cast<int>(result_.stages.size())});
  expect(TokenKind::Colon, fmt::format("and the type of input '{}', e.g. 'input {} : f32[M, K]'",
                                       name.text, name.text));
  current_.dtype = parse_type(fmt::format("for input '{}'", name.text));
  open(TokenKind::LBracket, fmt::format("and the shape of input '{}' after its type, e.g. {}[M, K]",
                                        name.text, type_name(current_.dtype)));
  for (int d = 0;; ++d) {
    if (d == kMaxDimensions)
      fail(peek(), "limit-exceeded",
           fmt::format("input '{}' has more than {} dimensions; a tensor has at most {}", name.text,
                       kMaxDimensions, kMaxDimensions));
    std::string what = fmt::format("dimension {} of input '{}'", d, name.text);
    std::int64_t extent = parse_extent(what, false);
    current_.axes.push_back(IterVar{fmt::format("d{}", d), extent});
    if (!accept(TokenKind::Comma))
      break;
  }
  close(TokenKind::RBracket, fmt::format("to end the shape of input '{}'", name.text));
  end_statement(fmt::format("the shape of input '{}'", name.text));
  result_.stages.push_back(std::move(current_));
}

// stage|output NAME[AXIS < EXTENT, ...] [: TYPE] = EXPR
void Parser::parse_compute(bool is_output) {
  Token keyword = take();
  Token name = expect_name(fmt::format("a name after '{}'", keyword.text));
  check_stage_count(name);
  current_ = Stage{};
  current_.kind = StageKind::Compute;
  current_.name = std::string(name.text);
  current_.is_output = is_output;
  current_.where = source_.location(name);
  declare(name, Global{Global::Tensor, name, 0, static_cast<int>(result_.stages.size())});
  parse_axes(name);
  std::optional<ScalarType> declared;
  if (accept(TokenKind::Colon))
    declared = parse_type(fmt::format("for {} '{}'", keyword.text, name.text));
  expect(TokenKind::Assign, fmt::format("and the body of '{}'", name.text));
  current_.body = parse_body(declared);
  current_.dtype = current_.body.type();
  end_statement(fmt::format("the body of '{}'", name.text));
  axes_.clear();
  result_.stages.push_back(std::move(current_));
}

void Parser::parse_axes(const Token& stage_name) {
  open(TokenKind::LBracket, fmt::format("and the axes of '{}', e.g. {}[i < M, j < N]",
                                        stage_name.text, stage_name.text));
  if (peek().is(TokenKind::RBracket))
    fail(peek(), "syntax-error",
         fmt::format("expected an axis 'NAME < EXTENT', found ']'; a stage has at least one "
                     "axis (use {}[i < 1] for a single value)",
                     stage_name.text));
  while (true) {
    if (current_.axes.size() == static_cast<std::size_t>(kMaxDimensions))
      fail(peek(), "limit-exceeded",
           fmt::format("'{}' has more than {} axes; a tensor has at most {} dimensions",
                       stage_name.text, kMaxDimensions, kMaxDimensions));
    Token axis = expect_name(fmt::format("an axis 'NAME < EXTENT' of '{}'", stage_name.text));
    if (!peek().is(TokenKind::LT))
      fail(peek(), "syntax-error",
           fmt::format("expected '<' and the extent after axis '{}', found {}; a stage declares "
                       "each axis with its extent, e.g. {}[i < M, j < N]",
                       axis.text, describe(peek()), stage_name.text));
    take();
    std::int64_t extent = parse_extent(
        fmt::format("axis '{}' of {} '{}'", axis.text, stage_word(current_), stage_name.text),
        false);
    declare_axis(axis, false);
    current_.axes.push_back(IterVar{std::string(axis.text), extent});
    if (!accept(TokenKind::Comma))
      break;
  }
  close(TokenKind::RBracket, fmt::format("to end the axes of '{}'", stage_name.text));
}

Expr Parser::parse_body(std::optional<ScalarType> declared) {
  body_reduction_.reset();
  const Token start = peek();
  if (start.is(TokenKind::Newline))
    fail(start, "syntax-error",
         "expected an expression after '=', found end of line; a statement ends at the end of "
         "the line (wrap a long expression in parentheses to continue it)");
  Expr body = parse_expr();
  if (body_reduction_ && !body.as<Reduce>()) {
    std::string hint =
        body.as<Cast>() && body.as<Cast>()->value.as<Reduce>()
            ? fmt::format("; to accumulate in another type, declare the stage's type instead, "
                          "e.g. '{}[...] : {} = {}(...)'",
                          current_.name, type_name(body.type()), body_reduction_->text)
            : fmt::format("; compute the {}(...) in a stage of its own and read it here",
                          body_reduction_->text);
    fail(*body_reduction_, "reduction-not-top-level",
         fmt::format("a reduction must be the whole right-hand side of a stage{}", hint));
  }
  if (declared)
    body = apply_type(*declared, body);
  check_body_type(start, body);
  return body;
}

Expr Parser::apply_type(ScalarType type, const Expr& body) {
  const Reduce* r = body.as<Reduce>();
  if (!r)
    return cast(type, body);
  if (r->type == type)
    return body;
  return Reduce::make(r->op, cast(type, r->body), r->axes);
}

void Parser::check_body_type(const Token& start, const Expr& body) const {
  if (body.type() == ScalarType::Bool)
    fail(start, "type-error",
         fmt::format("the body of '{}' is a condition (bool), but tensors hold f32, f64 or i32; "
                     "use select(cond, 1.0, 0.0) or f32(cond)",
                     current_.name));
  if (body.type() == ScalarType::I64)
    fail(start, "type-error",
         fmt::format("the body of '{}' is an index expression (i64), but tensors hold f32, f64 "
                     "or i32; cast it, e.g. f32(...), or declare the type: '{}[...] : f32 = ...'",
                     current_.name, current_.name));
}

} // namespace kiln::ir::parse
