#include "lexer.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <utility>

namespace kiln::ir {

SourceText::SourceText(std::string_view text, std::string_view filename)
    : text_(text), filename_(filename) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      line_starts_.push_back(i + 1);
}

std::string_view SourceText::line(int line) const {
  if (line < 1 || line > static_cast<int>(line_starts_.size()))
    return {};
  std::size_t begin = line_starts_[line - 1];
  std::size_t end = text_.find('\n', begin);
  std::string_view l = text_.substr(begin, end == std::string_view::npos ? end : end - begin);
  if (!l.empty() && l.back() == '\r')
    l.remove_suffix(1);
  return l;
}

SourceLocation SourceText::location(int line, int column) const {
  return SourceLocation{filename_, line, column, std::string(this->line(line))};
}

bool is_keyword(std::string_view word) {
  static constexpr std::array<std::string_view, 9> keywords = {
      "op", "param", "let", "const", "input", "stage", "output", "for", "inf"};
  for (std::string_view k : keywords)
    if (k == word)
      return true;
  return false;
}

std::string_view spelling(TokenKind kind) {
  switch (kind) {
  case TokenKind::Identifier:
    return "a name";
  case TokenKind::Integer:
    return "an integer";
  case TokenKind::Float:
    return "a number";
  case TokenKind::Newline:
    return "end of line";
  case TokenKind::End:
    return "end of file";
  case TokenKind::LParen:
    return "(";
  case TokenKind::RParen:
    return ")";
  case TokenKind::LBracket:
    return "[";
  case TokenKind::RBracket:
    return "]";
  case TokenKind::Comma:
    return ",";
  case TokenKind::Colon:
    return ":";
  case TokenKind::Assign:
    return "=";
  case TokenKind::Plus:
    return "+";
  case TokenKind::Minus:
    return "-";
  case TokenKind::Star:
    return "*";
  case TokenKind::Slash:
    return "/";
  case TokenKind::Percent:
    return "%";
  case TokenKind::Bang:
    return "!";
  case TokenKind::AndAnd:
    return "&&";
  case TokenKind::OrOr:
    return "||";
  case TokenKind::EQ:
    return "==";
  case TokenKind::NE:
    return "!=";
  case TokenKind::LT:
    return "<";
  case TokenKind::LE:
    return "<=";
  case TokenKind::GT:
    return ">";
  case TokenKind::GE:
    return ">=";
  }
  return "?";
}

std::string describe(const Token& token) {
  if (token.is(TokenKind::Newline) || token.is(TokenKind::End))
    return std::string(spelling(token.kind));
  if (token.is(TokenKind::Identifier) && is_keyword(token.text))
    return fmt::format("keyword '{}'", token.text);
  return fmt::format("'{}'", token.text);
}

[[noreturn]] static void fail_at(const SourceText& source, int line, int column,
                                 std::string_view id, std::string message) {
  throw UserError(Error(std::string(id), std::move(message), source.location(line, column)));
}

static bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

static bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

static bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c));
}

namespace {
/// Walks the text once; `pos_`, `line_` and `column_` always describe the
/// next character.
class Lexer {
public:
  explicit Lexer(const SourceText& source) : source_(source), text_(source.text()) {}

  std::vector<Token> run() {
    std::vector<Token> tokens;
    while (true) {
      skip_blanks_and_comments();
      if (pos_ >= text_.size()) {
        tokens.push_back(make(TokenKind::End, 0));
        return tokens;
      }
      tokens.push_back(next());
    }
  }

private:
  char at(std::size_t i) const { return pos_ + i < text_.size() ? text_[pos_ + i] : '\0'; }

  void skip_blanks_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        advance(1);
        continue;
      }
      if (c != '#')
        return;
      while (pos_ < text_.size() && text_[pos_] != '\n')
        advance(1);
    }
  }

  /// A token of `length` characters starting here; consumes them.
  Token make(TokenKind kind, std::size_t length) {
    Token t;
    t.kind = kind;
    t.text = text_.substr(pos_, length);
    t.offset = pos_;
    t.line = line_;
    t.column = column_;
    advance(length);
    return t;
  }

  void advance(std::size_t n) {
    for (std::size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        column_ = 1;
      } else if ((static_cast<unsigned char>(text_[pos_]) & 0xC0) != 0x80) {
        ++column_; // a column is a character: UTF-8 continuation bytes add none
      }
    }
  }

  Token next() {
    char c = at(0);
    if (c == '\n') {
      Token t = make(TokenKind::Newline, 1);
      t.text = {};
      return t;
    }
    if (is_name_start(c)) {
      std::size_t n = 1;
      while (is_name_char(at(n)))
        ++n;
      return make(TokenKind::Identifier, n);
    }
    if (is_digit(c) || (c == '.' && is_digit(at(1))))
      return number();
    if (auto kind = two_char_operator(); kind)
      return make(*kind, 2);
    if (auto kind = one_char_operator(c); kind)
      return make(*kind, 1);
    unexpected_character(c);
  }

  std::optional<TokenKind> two_char_operator() const {
    std::string_view two = text_.substr(pos_, 2);
    if (two == "&&")
      return TokenKind::AndAnd;
    if (two == "||")
      return TokenKind::OrOr;
    if (two == "==")
      return TokenKind::EQ;
    if (two == "!=")
      return TokenKind::NE;
    if (two == "<=")
      return TokenKind::LE;
    if (two == ">=")
      return TokenKind::GE;
    return std::nullopt;
  }

  static std::optional<TokenKind> one_char_operator(char c) {
    switch (c) {
    case '(':
      return TokenKind::LParen;
    case ')':
      return TokenKind::RParen;
    case '[':
      return TokenKind::LBracket;
    case ']':
      return TokenKind::RBracket;
    case ',':
      return TokenKind::Comma;
    case ':':
      return TokenKind::Colon;
    case '=':
      return TokenKind::Assign;
    case '+':
      return TokenKind::Plus;
    case '-':
      return TokenKind::Minus;
    case '*':
      return TokenKind::Star;
    case '/':
      return TokenKind::Slash;
    case '%':
      return TokenKind::Percent;
    case '!':
      return TokenKind::Bang;
    case '<':
      return TokenKind::LT;
    case '>':
      return TokenKind::GT;
    default:
      return std::nullopt;
    }
  }

  /// The length and code point of the UTF-8 character of two to four bytes
  /// at `pos`, or nothing when the bytes there are not one.
  std::optional<std::pair<std::size_t, std::uint32_t>> utf8_character(std::size_t pos) const {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text_[pos + i]); };
    const unsigned char lead = byte(0);
    std::size_t length = lead >= 0xF0 && lead < 0xF5 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
    if (lead >= 0xF5 || length == 0 || pos + length > text_.size())
      return std::nullopt;
    std::uint32_t code = lead & (0x7F >> length);
    for (std::size_t i = 1; i < length; ++i) {
      if ((byte(i) & 0xC0) != 0x80)
        return std::nullopt;
      code = code << 6 | (byte(i) & 0x3F);
    }
    return std::pair{length, code};
  }

  [[noreturn]] void unexpected_character(char c) const {
    std::string hint;
    switch (c) {
    case ';':
      hint = "statements end at the end of the line; remove the ';'";
      break;
    case '&':
      hint = "did you mean '&&'?";
      break;
    case '|':
      hint = "did you mean '||'?";
      break;
    case '{':
    case '}':
      hint = "group with '(' and ')'";
      break;
    default:
      hint = "the language uses names, numbers, ( ) [ ] , : = and the operators "
             "+ - * / % ! && || == != < <= > >=";
      break;
    }
    std::string shown;
    if (std::isprint(static_cast<unsigned char>(c)))
      shown = fmt::format("'{}'", c);
    else if (auto utf8 = utf8_character(pos_))
      shown = fmt::format("'{}' (U+{:04X})", text_.substr(pos_, utf8->first), utf8->second);
    else
      shown = fmt::format("byte 0x{:02x} (not text)", static_cast<unsigned char>(c));
    fail_at(source_, line_, column_, "unexpected-character",
            fmt::format("unexpected character {}; {}", shown, hint));
  }

  /// Integer: digits. Float: digits with a '.', an exponent or both
  /// (1.0, .5, 1., 1e-3, 2.5e+10).
  Token number() {
    std::size_t n = 0;
    while (is_digit(at(n)))
      ++n;
    bool is_float = false;
    if (at(n) == '.') {
      is_float = true;
      ++n;
      while (is_digit(at(n)))
        ++n;
    }
    if (at(n) == 'e' || at(n) == 'E') {
      std::size_t m = n + 1;
      if (at(m) == '+' || at(m) == '-')
        ++m;
      if (is_digit(at(m))) {
        is_float = true;
        n = m;
        while (is_digit(at(n)))
          ++n;
      }
    }
    std::string_view spelled = text_.substr(pos_, n);
    if (is_name_char(at(n)))
      bad_suffix(spelled, n);
    Token t = make(is_float ? TokenKind::Float : TokenKind::Integer, n);
    if (is_float)
      return finish_float(t);
    return finish_integer(t);
  }

  [[noreturn]] void bad_suffix(std::string_view spelled, std::size_t n) const {
    std::size_t end = n;
    while (is_name_char(at(end)))
      ++end;
    std::string_view suffix = text_.substr(pos_ + n, end - n);
    fail_at(source_, line_, column_ + static_cast<int>(n), "bad-number",
            fmt::format("invalid suffix '{}' on number '{}'; numbers have no suffix (a float "
                        "literal is f32, write f64({}) for a double)",
                        suffix, spelled, spelled));
  }

  Token finish_integer(Token t) const {
    auto [end, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.int_value);
    constexpr std::uint64_t limit = std::uint64_t{1} << 63;
    if (ec != std::errc() || t.int_value > limit)
      fail_at(source_, t.line, t.column, "integer-overflow",
              fmt::format("integer literal '{}' does not fit in 64 bits; integers range from "
                          "-9223372036854775808 to 9223372036854775807",
                          t.text));
    return t;
  }

  Token finish_float(Token t) const {
    std::string spelled(t.text);
    // from_chars does not read "1." or ".5" in every libstdc++ mode; pad them.
    if (spelled.front() == '.')
      spelled.insert(spelled.begin(), '0');
    auto [end, ec] =
        std::from_chars(spelled.data(), spelled.data() + spelled.size(), t.float_value);
    if (ec == std::errc::result_out_of_range)
      fail_at(source_, t.line, t.column, "bad-number",
              fmt::format("float literal '{}' is out of range; use inf for infinity", t.text));
    KILN_ASSERT(ec == std::errc() && end == spelled.data() + spelled.size(),
                "the lexer only passes well-formed numbers to from_chars");
    return t;
  }

  const SourceText& source_;
  std::string_view text_;
  std::size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
};
} // namespace

std::vector<Token> lex(const SourceText& source) {
  return Lexer(source).run();
}

} // namespace kiln::ir
