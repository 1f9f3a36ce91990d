// The token cursor of the parser: significant tokens, brackets, the ends of
// statements, the source text of a range of tokens, and located errors.
#include "op_parser.h"

#include <fmt/format.h>

namespace kiln::ir::parse {

bool starts_statement(const Token& t) {
  return t.is_word("op") || t.is_word("param") || t.is_word("let") || t.is_word("const") ||
         t.is_word("input") || t.is_word("stage") || t.is_word("output");
}

void Parser::fail(const Token& at, std::string_view id, std::string message) const {
  throw UserError(Error(std::string(id), std::move(message), source_.location(at)));
}

std::string Parser::where(const Token& t) const {
  return fmt::format("line {}:{}", t.line, t.column);
}

const Token& Parser::peek() {
  while (!open_.empty() && tokens_[pos_].is(TokenKind::Newline))
    ++pos_;
  return tokens_[pos_];
}

std::size_t Parser::mark() {
  peek();
  return pos_;
}

Token Parser::take() {
  Token t = peek();
  if (!t.is(TokenKind::End))
    ++pos_;
  return t;
}

bool Parser::accept(TokenKind kind) {
  if (!peek().is(kind))
    return false;
  take();
  return true;
}

Token Parser::expect(TokenKind kind, std::string_view context) {
  if (!peek().is(kind))
    fail(peek(), "syntax-error",
         fmt::format("expected '{}'{}{}, found {}", spelling(kind), context.empty() ? "" : " ",
                     context, describe(peek())));
  return take();
}

Token Parser::expect_name(std::string_view what) {
  const Token& t = peek();
  if (t.is(TokenKind::Identifier) && is_keyword(t.text))
    fail(t, "syntax-error",
         fmt::format("expected {}, found keyword '{}'; keywords cannot be used as names", what,
                     t.text));
  if (!t.is(TokenKind::Identifier))
    fail(t, "syntax-error", fmt::format("expected {}, found {}", what, describe(t)));
  return take();
}

void Parser::open(TokenKind kind, std::string_view context) {
  open_.push_back(expect(kind, context));
}

void Parser::close(TokenKind kind, std::string_view context) {
  const Token& t = peek();
  if (t.is(kind)) {
    take();
    open_.pop_back();
    return;
  }
  if (t.is(TokenKind::End) || starts_statement(t)) {
    const Token& opener = open_.back();
    fail(opener, "unterminated-bracket",
         fmt::format("'{}' is never closed; add '{}' {}", opener.text, spelling(kind), context));
  }
  fail(t, "syntax-error",
       fmt::format("expected '{}' {}, found {}", spelling(kind), context, describe(t)));
}

void Parser::skip_newlines() {
  while (tokens_[pos_].is(TokenKind::Newline))
    ++pos_;
}

void Parser::end_statement(std::string_view what) {
  const Token& t = peek();
  if (t.is(TokenKind::End))
    return;
  if (t.is(TokenKind::Newline)) {
    take();
    return;
  }
  std::string hint;
  if (t.is(TokenKind::Assign))
    hint = "; to compare, use '=='";
  else if (t.is(TokenKind::RParen) || t.is(TokenKind::RBracket))
    hint = "; it closes no bracket";
  fail(t, "syntax-error",
       fmt::format("expected end of line after {}, found {}{}", what, describe(t), hint));
}

std::string Parser::text_of(std::size_t begin, std::size_t end) const {
  if (end <= begin)
    return {};
  std::size_t from = tokens_[begin].offset;
  std::size_t to = tokens_[end - 1].offset + tokens_[end - 1].text.size();
  std::string_view raw = source_.text().substr(from, to - from);
  std::string out;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '#') {
      while (i + 1 < raw.size() && raw[i + 1] != '\n')
        ++i;
      continue;
    }
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (space && (out.empty() || out.back() == ' '))
      continue;
    out += space ? ' ' : c;
  }
  return std::string(trim(out));
}

} // namespace kiln::ir::parse
