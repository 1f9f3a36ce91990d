// The op language parser: recursive descent over the tokens of lexer.h,
// building ir::Expr nodes directly. The grammar, the type rules and every
// error id are in docs/op-language.md.
//
// Every user error goes through `fail(token, "id", message)` (located) or
// `Error("id", message)` (for --set, which has no location), so that
// scripts/check-error-tests can find the ids. Each id has a test in
// test/error/.
#include "kiln/ir/parser.h"

#include "lexer.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace kiln::ir {

// --- small helpers ---

static std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// A whole-string integer with an optional sign, or nothing.
static std::optional<std::int64_t> parse_integer(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+')
    s.remove_prefix(1);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size())
    return std::nullopt;
  return value;
}

static std::string join(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += separator;
    out += items[i];
  }
  return out;
}

static std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// " did you mean 'X'?" for the closest candidate when it is close enough,
/// else "".
static std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const std::string& c : candidates) {
    std::size_t d = edit_distance(name, c);
    if (d < best_distance && d < c.size()) {
      best = c;
      best_distance = d;
    }
  }
  return best.empty() ? "" : fmt::format(" did you mean '{}'?", best);
}


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

/// A statement starts with one of these words, which never occur inside an
/// expression: seeing one inside brackets means a bracket was left open.
static bool starts_statement(const Token& t) {
  return t.is_word("op") || t.is_word("param") || t.is_word("let") || t.is_word("input") ||
         t.is_word("stage") || t.is_word("output");
}

static bool is_tensor_type(ScalarType t) {
  return t == ScalarType::F32 || t == ScalarType::F64 || t == ScalarType::I32;
}

/// Integer arithmetic on constants is done while parsing (so `K - 1` is the
/// literal 511, as it is in C++ code that builds the DAG).
static bool is_constant(const Expr& e) {
  const auto* i = e.as<IntImm>();
  return i && i->type == ScalarType::I64;
}

static std::int64_t constant_value(const Expr& e) {
  return e.as<IntImm>()->value;
}

// --- functions of the language ---

namespace {
enum class Function : std::uint8_t { Math, MinMax, Select, Cast, Sum };

struct FunctionInfo {
  std::string_view name;
  Function kind;
  int arity;
};
} // namespace

static constexpr FunctionInfo functions[] = {
    {"exp", Function::Math, 1},      {"log", Function::Math, 1},   {"sqrt", Function::Math, 1},
    {"abs", Function::Math, 1},      {"min", Function::MinMax, 2}, {"max", Function::MinMax, 2},
    {"select", Function::Select, 3}, {"if", Function::Select, 3},  {"f32", Function::Cast, 1},
    {"f64", Function::Cast, 1},      {"i32", Function::Cast, 1},   {"i64", Function::Cast, 1},
    {"sum", Function::Sum, 1},
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
    "exp, log, sqrt, abs, min, max, select (or if), the casts f32, f64, i32, i64 and the "
    "reductions sum, max, min";

// --- --set overrides ---

namespace {
struct Override {
  std::string name;
  std::string text; ///< the value as typed
  std::int64_t value = 0;
  bool used = false;
};
} // namespace

static std::vector<Override> check_overrides(const ParamOverrides& overrides) {
  std::vector<Override> out;
  for (const auto& [name, text] : overrides) {
    std::optional<std::int64_t> value = parse_integer(text);
    if (!value)
      throw UserError(Error("set-not-integer",
                            fmt::format("--set {}={}: '{}' is not an integer; parameters are "
                                        "integers, e.g. --set {}=512",
                                        name, text, text, name)));
    // The last --set of a name wins, as with most command-line options.
    auto same =
        std::find_if(out.begin(), out.end(), [&](const Override& o) { return o.name == name; });
    if (same != out.end())
      out.erase(same);
    out.push_back(Override{name, text, *value});
  }
  return out;
}

// --- the parser ---

namespace {
enum class Mode : std::uint8_t { Full, ParamsOnly };

/// A name declared at the top level of the file.
struct Global {
  enum Kind : std::uint8_t { Param, Let, Tensor };

  Global(Kind k, const Token& name, std::int64_t v, int s = -1)
      : kind(k), decl(name), value(v), stage(s) {}

  Kind kind;
  Token decl;                   ///< the name in its declaration
  std::int64_t value = 0;       ///< Param, Let
  int stage = -1;               ///< Tensor: index in the parser's stages
  std::string text;             ///< Let: its expression as written
  std::set<std::string> params; ///< Let: the params it derives from
  bool overridden = false;      ///< Param: set with --set
};

/// An axis in scope in a stage body: a spatial axis or the axis of the
/// reduction being parsed.
struct Axis {
  std::string name;
  Token decl;
  bool reduction = false;
};

struct ParsedOp {
  std::string name;
  std::vector<Stage> stages;
  std::vector<Param> params;
  std::vector<ParamDecl> decls;
};

class Parser {
public:
  Parser(const SourceText& source, std::vector<Override> overrides, Mode mode)
      : source_(source), tokens_(lex(source)), overrides_(std::move(overrides)), mode_(mode) {
    prescan();
  }

  ParsedOp run() {
    parse_file();
    return std::move(result_);
  }

private:
  // --- errors ---

  [[noreturn]] void fail(const Token& at, std::string_view id, std::string message) const {
    throw UserError(Error(std::string(id), std::move(message), source_.location(at)));
  }

  std::string where(const Token& t) const { return fmt::format("line {}:{}", t.line, t.column); }

  /// Builds a node with one of expr.h's functions, which throw UserError on
  /// type misuse; the error gets the location of `at`.
  template <typename Fn> Expr build(const Token& at, Fn&& fn) const {
    try {
      return fn();
    } catch (const UserError& e) {
      throw UserError(Error(e.error().id(), e.error().message(), source_.location(at)));
    }
  }

  // --- tokens ---

  /// The next significant token: newlines inside brackets are skipped.
  const Token& peek() {
    while (!open_.empty() && tokens_[pos_].is(TokenKind::Newline))
      ++pos_;
    return tokens_[pos_];
  }

  /// Index of the next significant token (the start of what comes next).
  std::size_t mark() {
    peek();
    return pos_;
  }

  Token take() {
    Token t = peek();
    if (!t.is(TokenKind::End))
      ++pos_;
    return t;
  }

  bool accept(TokenKind kind) {
    if (!peek().is(kind))
      return false;
    take();
    return true;
  }

  /// Takes a token of `kind` or fails with "expected 'X' <context>, found Y".
  Token expect(TokenKind kind, std::string_view context) {
    if (!peek().is(kind))
      fail(peek(), "syntax-error",
           fmt::format("expected '{}'{}{}, found {}", spelling(kind), context.empty() ? "" : " ",
                       context, describe(peek())));
    return take();
  }

  /// A name that is not a keyword.
  Token expect_name(std::string_view what) {
    const Token& t = peek();
    if (t.is(TokenKind::Identifier) && is_keyword(t.text))
      fail(t, "syntax-error",
           fmt::format("expected {}, found keyword '{}'; keywords cannot be used as names", what,
                       t.text));
    if (!t.is(TokenKind::Identifier))
      fail(t, "syntax-error", fmt::format("expected {}, found {}", what, describe(t)));
    return take();
  }

  void open(TokenKind kind, std::string_view context) { open_.push_back(expect(kind, context)); }

  void close(TokenKind kind, std::string_view context) {
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

  void skip_newlines() {
    while (tokens_[pos_].is(TokenKind::Newline))
      ++pos_;
  }

  void end_statement(std::string_view what) {
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

  /// The source text of tokens [begin, end), on one line, without comments.
  std::string text_of(std::size_t begin, std::size_t end) const {
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

  // --- names ---

  /// Finds every declared name and every reduction axis in the file first,
  /// so that a use before the declaration, or of a reduction axis outside its
  /// reduction, gets a message that says so.
  void prescan() {
    for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      const Token& next = tokens_[i + 1];
      if (starts_statement(t) && !t.is_word("op") && next.is(TokenKind::Identifier))
        declared_later_.emplace(std::string(next.text), std::make_pair(t.text, next));
      if (t.is_word("for"))
        prescan_reduction_axes(i + 1);
    }
  }

  void prescan_reduction_axes(std::size_t i) {
    int depth = 0;
    bool expect_axis = true;
    for (; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      if (t.is(TokenKind::End) || starts_statement(t))
        return;
      if (depth == 0 && expect_axis && t.is(TokenKind::Identifier))
        reduction_axes_.emplace(std::string(t.text), t);
      expect_axis = false;
      if (t.is(TokenKind::LParen) || t.is(TokenKind::LBracket))
        ++depth;
      if (t.is(TokenKind::RParen) || t.is(TokenKind::RBracket)) {
        if (depth == 0)
          return;
        --depth;
      }
      if (depth == 0 && t.is(TokenKind::Comma))
        expect_axis = true;
    }
  }

  const Global* find_global(std::string_view name) const {
    auto it = globals_.find(std::string(name));
    return it == globals_.end() ? nullptr : &it->second;
  }

  const Axis* find_axis(std::string_view name) const {
    for (const Axis& a : axes_)
      if (a.name == name)
        return &a;
    return nullptr;
  }

  static std::string_view kind_name(Global::Kind kind) {
    switch (kind) {
    case Global::Param:
      return "param";
    case Global::Let:
      return "let";
    case Global::Tensor:
      return "tensor";
    }
    return "?";
  }

  std::string describe_global(const Global& g) const {
    if (g.kind != Global::Tensor)
      return fmt::format("{} '{}'", kind_name(g.kind), g.decl.text);
    const Stage& s = stage_of(g);
    return fmt::format("{} '{}'", stage_word(s), s.name);
  }

  static std::string_view stage_word(const Stage& s) {
    if (s.is_placeholder())
      return "input";
    return s.is_output ? "output" : "stage";
  }

  const Stage& stage_of(const Global& g) const {
    if (g.stage == static_cast<int>(result_.stages.size()))
      return current_;
    return result_.stages.at(g.stage);
  }

  void declare(const Token& name, Global global) {
    if (const Global* g = find_global(name.text))
      fail(name, "duplicate-name",
           fmt::format("'{}' is already declared as {} at {}; choose another name", name.text,
                       describe_global(*g), where(g->decl)));
    global.decl = name;
    globals_.emplace(std::string(name.text), std::move(global));
    order_.emplace_back(name.text);
  }

  void declare_axis(const Token& name, bool reduction) {
    if (const Global* g = find_global(name.text))
      fail(name, "duplicate-name",
           fmt::format("axis '{}' has the name of {} (declared at {}); rename the axis", name.text,
                       describe_global(*g), where(g->decl)));
    if (const Axis* a = find_axis(name.text))
      fail(name, "duplicate-axis",
           fmt::format("axis '{}' is already an axis of {} '{}' (at {}); give each axis its own "
                       "name",
                       name.text, stage_word(current_), current_.name, where(a->decl)));
    axes_.push_back(Axis{std::string(name.text), name, reduction});
  }

  /// Declared names of these kinds, in order (without the stage being parsed).
  std::vector<std::string> names_of(std::initializer_list<Global::Kind> kinds) const {
    std::vector<std::string> names;
    for (const std::string& name : order_) {
      const Global& g = globals_.at(name);
      bool current = g.kind == Global::Tensor && &stage_of(g) == &current_;
      if (!current && std::find(kinds.begin(), kinds.end(), g.kind) != kinds.end())
        names.push_back(name);
    }
    return names;
  }

  /// "M = 0 from --set, N = 512" for the params and lets named in tokens
  /// [begin, end), and the params those lets derive from.
  std::string values_in(std::size_t begin, std::size_t end) const {
    std::vector<std::string> names;
    auto add = [&](const std::string& name) {
      if (std::find(names.begin(), names.end(), name) == names.end())
        names.push_back(name);
    };
    for (std::size_t i = begin; i < end; ++i) {
      const Global* g =
          tokens_[i].is(TokenKind::Identifier) ? find_global(tokens_[i].text) : nullptr;
      if (!g || g->kind == Global::Tensor)
        continue;
      add(std::string(tokens_[i].text));
      for (const std::string& p : g->params)
        add(p);
    }
    std::vector<std::string> parts;
    for (const std::string& n : names) {
      const Global* g = find_global(n);
      parts.push_back(fmt::format("{} = {}{}", n, g->value, g->overridden ? " from --set" : ""));
    }
    return join(parts);
  }

  /// The params a let derives from (through other lets too).
  std::set<std::string> params_in(std::size_t begin, std::size_t end) const {
    std::set<std::string> params;
    for (std::size_t i = begin; i < end; ++i) {
      const Global* g =
          tokens_[i].is(TokenKind::Identifier) ? find_global(tokens_[i].text) : nullptr;
      if (g && g->kind == Global::Param)
        params.insert(std::string(tokens_[i].text));
      if (g && g->kind == Global::Let)
        params.insert(g->params.begin(), g->params.end());
    }
    return params;
  }

  // --- statements ---

  void parse_file() {
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

  void parse_op_name() {
    take();
    op_token_ = expect_name("the op's name after 'op'");
    result_.name = std::string(op_token_.text);
    end_statement("the op's name");
  }

  void parse_statement() {
    const Token& t = peek();
    if (t.is_word("param"))
      return parse_param();
    if (t.is_word("let"))
      return parse_let();
    if (mode_ == Mode::ParamsOnly)
      return skip_statement();
    if (t.is_word("input"))
      return parse_input();
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
         fmt::format("expected a statement (param, let, input, stage or output), found {}{}",
                     describe(t), hint));
  }

  /// Skips a statement the ParamsOnly mode does not need.
  void skip_statement() {
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

  Override* find_override(std::string_view name) {
    for (Override& o : overrides_)
      if (o.name == name)
        return &o;
    return nullptr;
  }

  // param NAME = [-]INTEGER
  void parse_param() {
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

  std::int64_t literal_value(const Token& literal, bool negative) const {
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

  // let NAME = CONSTANT-EXPRESSION
  void parse_let() {
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

  /// An element type of a tensor.
  ScalarType parse_type(std::string_view context) {
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

  // input NAME : TYPE[EXTENT, ...]
  void parse_input() {
    take();
    Token name = expect_name("an input name after 'input'");
    current_ = Stage{};
    current_.kind = StageKind::Placeholder;
    current_.name = std::string(name.text);
    current_.where = source_.location(name);
    declare(name, Global{Global::Tensor, name, 0, static_cast<int>(result_.stages.size())});
    expect(TokenKind::Colon, fmt::format("and the type of input '{}', e.g. 'input {} : f32[M, K]'",
                                         name.text, name.text));
    current_.dtype = parse_type(fmt::format("for input '{}'", name.text));
    open(TokenKind::LBracket,
         fmt::format("and the shape of input '{}' after its type, e.g. {}[M, K]", name.text,
                     type_name(current_.dtype)));
    for (int d = 0;; ++d) {
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
  void parse_compute(bool is_output) {
    Token keyword = take();
    Token name = expect_name(fmt::format("a name after '{}'", keyword.text));
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

  void parse_axes(const Token& stage_name) {
    open(TokenKind::LBracket, fmt::format("and the axes of '{}', e.g. {}[i < M, j < N]",
                                          stage_name.text, stage_name.text));
    if (peek().is(TokenKind::RBracket))
      fail(peek(), "syntax-error",
           fmt::format("expected an axis 'NAME < EXTENT', found ']'; a stage has at least one "
                       "axis (use {}[i < 1] for a single value)",
                       stage_name.text));
    while (true) {
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

  /// The right-hand side of a stage, with its declared type applied.
  Expr parse_body(std::optional<ScalarType> declared) {
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

  /// `stage C[...] : T = E` casts E to T. A reduction stays the whole body:
  /// its terms are cast, so the accumulation happens in T.
  static Expr apply_type(ScalarType type, const Expr& body) {
    const Reduce* r = body.as<Reduce>();
    if (!r)
      return cast(type, body);
    if (r->type == type)
      return body;
    return Reduce::make(r->op, cast(type, r->body), r->axes);
  }

  void check_body_type(const Token& start, const Expr& body) const {
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

  // --- constants: let values, extents ---

  /// An integer computed from literals, params and lets. `what` names it in
  /// messages ("the extent of axis 'i'").
  std::int64_t parse_constant(std::string what, bool full_expression) {
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

  /// An extent: a positive constant. `what` names the axis or dimension.
  std::int64_t parse_extent(const std::string& what, bool reduction) {
    std::size_t begin = mark();
    std::int64_t extent = parse_constant(fmt::format("the extent of {}", what), false);
    if (extent > 0)
      return extent;
    std::size_t end = pos_;
    std::string values = values_in(begin, end);
    std::string shown =
        values.empty() ? std::to_string(extent)
                       : fmt::format("{} ('{}', where {})", extent, text_of(begin, end), values);
    if (reduction)
      fail(tokens_[begin], "empty-reduction",
           fmt::format("{} has extent {}; the reduction would be empty, and extents must be "
                       "positive",
                       what, shown));
    fail(tokens_[begin], "nonpositive-extent",
         fmt::format("{} has extent {}; extents must be positive", what, shown));
  }

  // --- expressions, lowest precedence first ---

  Expr parse_expr() { return parse_or(); }

  Expr parse_or() {
    Expr e = parse_and();
    while (peek().is(TokenKind::OrOr)) {
      Token op = take();
      Expr r = parse_and();
      e = build(op, [&] { return logical_or(e, r); });
    }
    return e;
  }

  Expr parse_and() {
    Expr e = parse_compare();
    while (peek().is(TokenKind::AndAnd)) {
      Token op = take();
      Expr r = parse_compare();
      e = build(op, [&] { return logical_and(e, r); });
    }
    return e;
  }

  /// Comparisons do not chain: `a < b < c` is an error, not `(a < b) < c`.
  Expr parse_compare() {
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

  Expr parse_additive() {
    Expr e = parse_multiplicative();
    while (peek().is(TokenKind::Plus) || peek().is(TokenKind::Minus)) {
      Token op = take();
      std::size_t rhs = mark();
      Expr r = parse_multiplicative();
      e = make_binary(op, op.is(TokenKind::Plus) ? BinaryOp::Add : BinaryOp::Sub, e, r, rhs);
    }
    return e;
  }

  Expr parse_multiplicative() {
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

  /// Arithmetic, folded when both sides are constants. `rhs` is the token
  /// index where the right operand starts (for messages).
  Expr make_binary(const Token& op, BinaryOp kind, const Expr& a, const Expr& b, std::size_t rhs) {
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

  [[noreturn]] void division_by_zero(const Token& op, std::size_t rhs) const {
    std::string values = values_in(rhs, pos_);
    fail(op, "division-by-zero",
         fmt::format("integer division by zero: the divisor '{}' is 0{}; change the divisor{}",
                     text_of(rhs, pos_), values.empty() ? "" : " (" + values + ")",
                     values.empty() ? "" : " or the parameters"));
  }

  std::int64_t fold(const Token& op, BinaryOp kind, std::int64_t a, std::int64_t b,
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

  Expr parse_unary() {
    const Token& t = peek();
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

  Expr parse_primary() {
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

  Expr parse_name() {
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

  /// A name on its own: an axis, a param or a let.
  Expr resolve(const Token& t) {
    std::string_view name = t.text;
    if (find_axis(name)) {
      if (context_ == Context::Constant)
        fail(t, "non-constant",
             fmt::format("{} must be a constant, but '{}' is an axis; use integer literals, "
                         "params and lets",
                         constant_what_, name));
      return Var::make(std::string(name));
    }
    if (const Global* g = find_global(name)) {
      if (g->kind != Global::Tensor)
        return IntImm::make(g->value);
      const Stage& s = stage_of(*g);
      fail(t, "tensor-without-indices",
           fmt::format("{} '{}' is a tensor; read one element with an index per dimension, e.g. "
                       "{}[{}]",
                       stage_word(s), name, name, example_indices(s)));
    }
    not_found(t, "name");
  }

  /// A name that is not declared (yet): explains why and what is available.
  [[noreturn]] void not_found(const Token& t, std::string_view what) const {
    std::string name(t.text);
    if (auto it = declared_later_.find(name); it != declared_later_.end()) {
      const auto& [keyword, decl] = it->second;
      if (decl.offset < t.offset)
        fail(t, "use-before-definition",
             fmt::format("{} '{}' is defined by this statement and cannot refer to itself", keyword,
                         name));
      fail(t, "use-before-definition",
           fmt::format("{} '{}' is declared at {}, after this use; declare it before it is used",
                       keyword, name, where(decl)));
    }
    if (auto it = reduction_axes_.find(name); it != reduction_axes_.end() && !find_axis(name))
      fail(t, "reduction-axis-outside",
           fmt::format("'{}' is a reduction axis (declared at {}) and can only be used inside its "
                       "reduction; to index by it here, make it an axis of this stage",
                       name, where(it->second)));
    if (find_function(name))
      fail(t, "unbound-variable",
           fmt::format("'{}' is a function; call it with parentheses, e.g. {}(x)", name, name));
    std::vector<std::string> candidates;
    for (const Axis& a : axes_)
      candidates.push_back(a.name);
    for (const std::string& n : names_of({Global::Param, Global::Let}))
      candidates.push_back(n);
    fail(t, "unbound-variable",
         fmt::format("unknown {} '{}';{} {}", what, name, suggestion(name, candidates),
                     names_in_scope()));
  }

  std::string names_in_scope() const {
    std::vector<std::string> spatial, reduction;
    for (const Axis& a : axes_)
      (a.reduction ? reduction : spatial).push_back(a.name);
    std::vector<std::string> params = names_of({Global::Param});
    std::vector<std::string> lets = names_of({Global::Let});
    std::vector<std::string> parts;
    if (context_ == Context::Body) {
      add_names(parts, "the axis", "the axes", spatial);
      add_names(parts, "the reduction axis", "the reduction axes", reduction);
    }
    add_names(parts, "the param", "the params", params);
    add_names(parts, "the let", "the lets", lets);
    std::string listed = join(parts, "; ");
    if (context_ == Context::Constant)
      return parts.empty() ? fmt::format("{} can only use integer literals here (no params are "
                                         "declared above it)",
                                         constant_what_)
                           : fmt::format("{} can use {}", constant_what_, listed);
    return parts.empty() ? std::string("no names are declared here")
                         : fmt::format("here you can use {}", listed);
  }

  static void add_names(std::vector<std::string>& parts, std::string_view one,
                        std::string_view many, const std::vector<std::string>& names) {
    if (!names.empty())
      parts.push_back(fmt::format("{} {}", names.size() == 1 ? one : many, join(names)));
  }

  static std::string example_indices(const Stage& s) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < s.axes.size(); ++i)
      names.push_back(s.is_placeholder() ? std::string(1, static_cast<char>('i' + i % 18))
                                         : s.axes[i].name);
    return join(names);
  }

  static std::string shape_text(const Stage& s) {
    std::vector<std::string> extents;
    for (const IterVar& a : s.axes)
      extents.push_back(std::to_string(a.extent));
    return fmt::format("{}[{}]", type_name(s.dtype), join(extents));
  }

  // NAME[INDEX, ...]
  Expr parse_load(const Token& name) {
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
                           indices.size(), name.text, text_of(begin, pos_),
                           type_name(index.type())));
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

  const Stage& resolve_tensor(const Token& name) const {
    const Global* g = find_global(name.text);
    if (g && g->kind == Global::Tensor) {
      if (g->stage < static_cast<int>(result_.stages.size()))
        return result_.stages[g->stage];
      fail(name, "use-before-definition",
           fmt::format("{} '{}' reads itself; a stage can only read tensors declared above it "
                       "(recurrences are not supported)",
                       stage_word(current_), name.text));
    }
    if (g)
      fail(name, "unknown-tensor",
           fmt::format("'{}' is a {}, not a tensor; only inputs and stages can be indexed",
                       name.text, kind_name(g->kind)));
    if (find_axis(name.text))
      fail(name, "unknown-tensor",
           fmt::format("'{}' is an axis, not a tensor; only inputs and stages can be indexed",
                       name.text));
    if (auto it = declared_later_.find(std::string(name.text)); it != declared_later_.end())
      fail(name, "use-before-definition",
           fmt::format("{} '{}' is declared at {}, after this use; a stage can only read tensors "
                       "declared above it, so move it up",
                       it->second.first, name.text, where(it->second.second)));
    std::vector<std::string> tensors = names_of({Global::Tensor});
    fail(name, "unknown-tensor",
         fmt::format("unknown tensor '{}';{} {}", name.text, suggestion(name.text, tensors),
                     tensors.empty()
                         ? std::string("no inputs or stages are declared above it")
                         : fmt::format("the tensors declared above it are {}", join(tensors))));
  }

  // NAME(ARG, ...), including reductions NAME(EXPR for AXIS < EXTENT, ...)
  Expr parse_call(const Token& name) {
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

  Expr make_call(const Token& name, const FunctionInfo& f, const std::vector<Expr>& args,
                 std::size_t rhs) {
    switch (f.kind) {
    case Function::Math: {
      Intrinsic fn = name.text == "exp"    ? Intrinsic::Exp
                     : name.text == "log"  ? Intrinsic::Log
                     : name.text == "sqrt" ? Intrinsic::Sqrt
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

  [[noreturn]] void unknown_function(const Token& name) const {
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

  /// With pos_ at the '(' of a call: the index of a `for` directly inside
  /// those parentheses, or 0 when there is none.
  std::size_t find_for() {
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
  Expr parse_reduction(const Token& name) {
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

  std::vector<IterVar> parse_reduction_axes(const Token& name) {
    std::vector<IterVar> axes;
    while (true) {
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

  // --- overrides ---

  void check_overrides_used() const {
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

  enum class Context : std::uint8_t { Body, Constant };

  const SourceText& source_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  std::vector<Override> overrides_;
  Mode mode_;

  ParsedOp result_;
  Token op_token_;
  std::map<std::string, Global> globals_;
  std::vector<std::string> order_; ///< globals in declaration order
  /// From the prescan: the first declaration of each name (its keyword and
  /// name token), and the first reduction axis of each name.
  std::map<std::string, std::pair<std::string_view, Token>> declared_later_;
  std::map<std::string, Token> reduction_axes_;

  std::vector<Token> open_; ///< open brackets, innermost last
  Stage current_;           ///< the stage being parsed
  std::vector<Axis> axes_;  ///< axes in scope: spatial, then reduction
  Context context_ = Context::Body;
  std::string constant_what_; ///< what the constant being parsed is, for messages
  int reduction_depth_ = 0;
  std::optional<Token> body_reduction_; ///< the reduction in the current body
};
} // namespace

// --- the API ---

Expected<ComputeDAG> parse_op(std::string_view text, std::string_view filename,
                              const ParamOverrides& overrides) {
  return catch_user_error([&] {
    std::vector<Override> checked = check_overrides(overrides);
    SourceText source(text, filename);
    ParsedOp op = Parser(source, std::move(checked), Mode::Full).run();
    return ComputeDAG(std::move(op.name), std::move(op.stages), std::move(op.params));
  });
}

static Expected<std::string> read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return Error("cannot-open-file", fmt::format("cannot open op file '{}': {}; check the path",
                                                 path, std::strerror(errno)));
  std::string text;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0)
    text.append(buffer, n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed)
    return Error("cannot-open-file", fmt::format("cannot read op file '{}'", path));
  return text;
}

Expected<ComputeDAG> parse_op_file(const std::string& path, const ParamOverrides& overrides) {
  Expected<std::string> text = read_file(path);
  if (!text)
    return text.error();
  return parse_op(*text, path, overrides);
}

Expected<std::vector<ParamDecl>> parse_op_params(std::string_view text, std::string_view filename) {
  return catch_user_error([&] {
    SourceText source(text, filename);
    return Parser(source, {}, Mode::ParamsOnly).run().decls;
  });
}

Expected<std::pair<std::string, std::string>> parse_override(std::string_view text) {
  std::size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return Error("bad-set-syntax",
                 fmt::format("--set {}: expected NAME=VALUE, e.g. --set M=512", text));
  std::string_view name = trim(text.substr(0, eq));
  if (name.empty())
    return Error("bad-set-syntax",
                 fmt::format("--set {}: the parameter name is missing; expected NAME=VALUE, e.g. "
                             "--set M=512",
                             text));
  return std::make_pair(std::string(name), std::string(trim(text.substr(eq + 1))));
}

} // namespace kiln::ir
