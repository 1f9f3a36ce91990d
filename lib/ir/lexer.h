// Tokens of the op language (docs/op-language.md). Private to lib/ir: the
// parser is the only client.
#ifndef KILN_LIB_IR_LEXER_H
#define KILN_LIB_IR_LEXER_H

#include "kiln/support/error.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::ir {

enum class TokenKind : std::uint8_t {
  Identifier, // names and keywords (op, param, let, input, stage, output, for, inf)
  Integer,
  Float,
  Newline, // ends a statement outside brackets
  End,     // end of the text
  LParen,
  RParen,
  LBracket,
  RBracket,
  Comma,
  Colon,
  Assign, // =
  Plus,
  Minus,
  Star,
  Slash,
  Percent,
  Bang,
  AndAnd,
  OrOr,
  EQ,
  NE,
  LT,
  LE,
  GT,
  GE,
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;  ///< a view into the source; empty for Newline and End
  std::size_t offset = 0; ///< byte offset of the first character in the source
  int line = 0;           ///< 1-based
  int column = 0;         ///< 1-based, in bytes
  /// Integer: the magnitude (up to 2^63, so that -9223372036854775808 can be
  /// written); Float: unused.
  std::uint64_t int_value = 0;
  double float_value = 0; ///< Float only

  bool is(TokenKind k) const { return kind == k; }
  /// An identifier spelled `word` (keywords are identifiers to the lexer).
  bool is_word(std::string_view word) const {
    return kind == TokenKind::Identifier && text == word;
  }
};

/// The text being parsed, with its name: turns line/column into the
/// SourceLocation an Error displays.
class SourceText {
public:
  SourceText(std::string_view text, std::string_view filename);

  std::string_view text() const { return text_; }
  const std::string& filename() const { return filename_; }
  /// Line `line` (1-based) without its line break.
  std::string_view line(int line) const;
  SourceLocation location(int line, int column) const;
  SourceLocation location(const Token& token) const { return location(token.line, token.column); }

private:
  std::string_view text_;
  std::string filename_;
  std::vector<std::size_t> line_starts_;
};

/// Splits the source into tokens, ending with one End token. Comments (`#`
/// to the end of the line), spaces, tabs and carriage returns are skipped;
/// every line break is a Newline token (the parser ignores those inside
/// brackets). Throws UserError on text that starts no token.
std::vector<Token> lex(const SourceText& source);

/// How a token is shown in "expected X, found Y" messages: `'['`,
/// `end of line`, `end of file`.
std::string describe(const Token& token);
/// The spelling of a punctuation kind, e.g. "]" for RBracket.
std::string_view spelling(TokenKind kind);

/// Words reserved by the language: they cannot name params, tensors or axes.
bool is_keyword(std::string_view word);

} // namespace kiln::ir

#endif // KILN_LIB_IR_LEXER_H
