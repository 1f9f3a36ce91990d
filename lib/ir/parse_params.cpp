// Parameters: `param` statements with their --set overrides, `let`
// statements derived from them, and the --set overrides themselves.
#include "op_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>

namespace kiln::ir::parse {

/// A whole-string integer with an optional sign; std::errc::result_out_of_range
/// when it is one but does not fit 64 bits, std::errc::invalid_argument when
/// it is none.
static std::errc parse_integer(std::string_view s, std::int64_t& value) {
  s = trim(s);
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || end != s.data() + s.size())
    return std::errc::invalid_argument;
  return ec;
}

std::vector<Override> check_overrides(const ParamOverrides& overrides) {
  std::vector<Override> out;
  for (const auto& [name, text] : overrides) {
    std::int64_t value = 0;
    std::errc ec = parse_integer(text, value);
    if (ec == std::errc::result_out_of_range)
      throw UserError(Error("set-out-of-range",
                            fmt::format("--set {}={}: the integer does not fit 64 bits (at most "
                                        "{}); give a size the op can have",
                                        name, text, std::numeric_limits<std::int64_t>::max())));
    if (ec != std::errc())
      throw UserError(Error("set-not-integer",
                            fmt::format("--set {}={}: '{}' is not an integer; parameters are "
                                        "integers, e.g. --set {}=512",
                                        name, text, text, name)));
    // The last --set of a name wins, as with most command-line options.
    auto same =
        std::find_if(out.begin(), out.end(), [&](const Override& o) { return o.name == name; });
    if (same != out.end())
      out.erase(same);
    out.push_back(Override{name, text, value});
  }
  return out;
}

Override* Parser::find_override(std::string_view name) {
  for (Override& o : overrides_)
    if (o.name == name)
      return &o;
  return nullptr;
}

// param NAME = [-]INTEGER
void Parser::parse_param() {
  take();
  Token name = expect_name("a parameter name after 'param'");
  expect(TokenKind::Assign,
         fmt::format("and a default value after 'param {}', e.g. 'param {} = 512'", name.text,
                     name.text));
  const Token start = peek();
  bool negative = accept(TokenKind::Minus);
  const Token literal = peek();
  // An Integer is never the last token (End follows), so pos_ + 1 exists.
  bool is_literal = literal.is(TokenKind::Integer) && (tokens_[pos_ + 1].is(TokenKind::Newline) ||
                                                       tokens_[pos_ + 1].is(TokenKind::End));
  if (!is_literal)
    fail(start, "param-not-integer",
         fmt::format("the value of param '{}' must be an integer literal, e.g. 'param {} = "
                     "512'; for a value computed from other params, use 'let {} = ...'",
                     name.text, name.text, name.text));
  take();
  std::int64_t value = literal_value(literal, negative);
  Global g{Global::Param, name, value};
  if (Override* o = find_override(name.text)) {
    g.value = o->value;
    g.overridden = true;
    o->used = true;
  }
  declare(name, g);
  result_.params.push_back(Param{std::string(name.text), g.value});
  result_.decls.push_back(ParamDecl{std::string(name.text), value, false});
  end_statement(fmt::format("the value of param '{}'", name.text));
}

// let NAME = CONSTANT-EXPRESSION
void Parser::parse_let() {
  take();
  Token name = expect_name("a name after 'let'");
  expect(TokenKind::Assign, fmt::format("and a value after 'let {}'", name.text));
  std::size_t begin = mark();
  std::int64_t value = parse_constant(fmt::format("the value of let '{}'", name.text),
                                      /*full_expression=*/true);
  std::size_t end = pos_;
  Global g{Global::Let, name, value};
  g.text = text_of(begin, end);
  g.params = params_in(begin, end);
  if (const Override* o = find_override(name.text))
    throw UserError(
        Error("set-derived",
              fmt::format("--set {}={}: '{}' is derived (let {} = {}) and cannot be set; set the "
                          "parameters it derives from instead{}",
                          o->name, o->text, name.text, name.text, g.text,
                          g.params.empty()
                              ? std::string()
                              : fmt::format(" ({})", join({g.params.begin(), g.params.end()})))));
  declare(name, g);
  result_.decls.push_back(ParamDecl{std::string(name.text), value, true});
  end_statement(fmt::format("the value of let '{}'", name.text));
}

void Parser::check_overrides_used() const {
  for (const Override& o : overrides_) {
    if (o.used)
      continue;
    std::vector<std::string> params = names_of({Global::Param});
    throw UserError(
        Error("unknown-set-param",
              fmt::format("--set {}={}: op '{}' has no parameter '{}';{} {}", o.name, o.text,
                          result_.name, o.name, suggestion(o.name, params),
                          params.empty() ? std::string("it has no parameters")
                                         : fmt::format("its parameters are {}", join(params)))));
  }
}

} // namespace kiln::ir::parse

namespace kiln::ir {

Expected<std::pair<std::string, std::string>> parse_override(std::string_view text) {
  std::size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return Error("bad-set-syntax",
                 fmt::format("--set {}: expected NAME=VALUE, e.g. --set M=512", text));
  std::string_view name = parse::trim(text.substr(0, eq));
  if (name.empty())
    return Error("bad-set-syntax",
                 fmt::format("--set {}: the parameter name is missing; expected NAME=VALUE, e.g. "
                             "--set M=512",
                             text));
  return std::make_pair(std::string(name), std::string(parse::trim(text.substr(eq + 1))));
}

} // namespace kiln::ir
