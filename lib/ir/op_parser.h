// Private to lib/ir: the op language parser (docs/op-language.md), a
// recursive descent over the tokens of lexer.h that builds ir::Expr nodes
// directly. One class, whose members are defined by concern, as clang's
// Parser is across ParseExpr.cpp, ParseStmt.cpp and ParseDecl.cpp:
//
//   parser.cpp            parse_op and the other entry points of kiln/ir/parser.h
//   parse_tokens.cpp      the token cursor, brackets, statement ends, errors
//   parse_names.cpp       declared names, axes in scope, and the messages
//                         about names that cannot be used
//   parse_statements.cpp  op, input, stage and output statements
//   parse_params.cpp      param and let statements, --set overrides
//   constant_folding.cpp  constant integers: literals, folding, overflow,
//                         division by zero, constant expressions, extents
//   parse_expr.cpp        expressions, calls and reductions
//
// Every user error goes through `fail(token, "id", message)` (located) or
// `Error("id", message)` (for --set, which has no location), so that
// scripts/check-error-tests can find the ids. Each id has a test in
// test/error/.
#ifndef KILN_LIB_IR_OP_PARSER_H
#define KILN_LIB_IR_OP_PARSER_H

#include "lexer.h"

#include "kiln/ir/compute_dag.h"
#include "kiln/ir/limits.h"
#include "kiln/ir/parser.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::ir::parse {

/// A `--set NAME=VALUE`, checked to be an integer.
struct Override {
  std::string name;
  std::string text; ///< the value as typed
  std::int64_t value = 0;
  bool used = false;
};

/// The overrides with integer values, the last of each name kept; a
/// "set-not-integer" UserError otherwise (parse_params.cpp).
std::vector<Override> check_overrides(const ParamOverrides& overrides);

enum class Mode : std::uint8_t {
  Full,       ///< the whole op
  ParamsOnly, ///< the param and let statements only
};

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

/// What parsing a file gives.
struct ParsedOp {
  std::string name;
  std::vector<Stage> stages;
  std::vector<Param> params;
  std::vector<ParamDecl> decls;
};

/// A function of the language (parse_expr.cpp).
struct FunctionInfo;

/// Whether `name` is a function of the language (exp, min, sum, ...).
bool is_function(std::string_view name);

/// Integer arithmetic on constants is done while parsing (so `K - 1` is the
/// literal 511, as it is in C++ code that builds the DAG): whether `e` is
/// such a constant, and its value (constant_folding.cpp).
bool is_constant(const Expr& e);
std::int64_t constant_value(const Expr& e);

/// A statement starts with one of these words, which never occur inside an
/// expression: seeing one inside brackets means a bracket was left open
/// (parse_tokens.cpp).
bool starts_statement(const Token& t);

/// Text helpers of the messages (parse_names.cpp): `s` without surrounding
/// spaces and tabs, and `items` joined by `separator`.
std::string_view trim(std::string_view s);
std::string join(const std::vector<std::string>& items, std::string_view separator = ", ");
/// " did you mean 'X'?" for the closest candidate when it is close enough,
/// else "".
std::string suggestion(std::string_view name, const std::vector<std::string>& candidates);

/// Parses one op text; the first error throws a located UserError.
class Parser {
public:
  Parser(const SourceText& source, std::vector<Override> overrides, Mode mode);

  /// The whole op (Mode::Full) or its params and lets (Mode::ParamsOnly).
  ParsedOp run();

private:
  enum class Context : std::uint8_t { Body, Constant };

  // --- tokens and errors (parse_tokens.cpp) ---

  /// The user error `id` located at token `at`.
  [[noreturn]] void fail(const Token& at, std::string_view id, std::string message) const;
  /// "line L:C" of a token, for messages that point elsewhere.
  std::string where(const Token& t) const;
  /// Builds a node with one of expr.h's functions, which throw UserError on
  /// type misuse; the error gets the location of `at`.
  /// A node deeper than kMaxExprDepth fails here, at the operator that made
  /// it too deep.
  template <typename Fn> Expr build(const Token& at, Fn&& fn) const {
    Expr e;
    try {
      e = fn();
    } catch (const UserError& err) {
      throw UserError(Error(err.error().id(), err.error().message(), source_.location(at)));
    }
    if (e.depth() > kMaxExprDepth)
      too_deep(at);
    return e;
  }
  [[noreturn]] void too_deep(const Token& at) const;
  /// Fails when one more stage would pass kMaxStages.
  void check_stage_count(const Token& name) const;
  /// Counts the parser's own recursion (parentheses, brackets, calls, unary
  /// operators), which nests before any node is built.
  class NestingGuard {
  public:
    NestingGuard(Parser& parser, const Token& at) : parser_(parser) {
      if (++parser_.nesting_ > static_cast<int>(kMaxExprDepth))
        parser_.too_deep(at);
    }
    ~NestingGuard() { --parser_.nesting_; }
    NestingGuard(const NestingGuard&) = delete;
    NestingGuard& operator=(const NestingGuard&) = delete;

  private:
    Parser& parser_;
  };
  /// The next significant token: newlines inside brackets are skipped.
  const Token& peek();
  /// Index of the next significant token (the start of what comes next).
  std::size_t mark();
  Token take();
  bool accept(TokenKind kind);
  /// Takes a token of `kind` or fails with "expected 'X' <context>, found Y".
  Token expect(TokenKind kind, std::string_view context);
  /// A name that is not a keyword.
  Token expect_name(std::string_view what);
  void open(TokenKind kind, std::string_view context);
  void close(TokenKind kind, std::string_view context);
  void skip_newlines();
  void end_statement(std::string_view what);
  /// The source text of tokens [begin, end), on one line, without comments.
  std::string text_of(std::size_t begin, std::size_t end) const;

  // --- names (parse_names.cpp) ---

  /// Finds every declared name and every reduction axis in the file first,
  /// so that a use before the declaration, or of a reduction axis outside its
  /// reduction, gets a message that says so.
  void prescan();
  void prescan_reduction_axes(std::size_t i);
  const Global* find_global(std::string_view name) const;
  const Axis* find_axis(std::string_view name) const;
  static std::string_view kind_name(Global::Kind kind);
  std::string describe_global(const Global& g) const;
  static std::string_view stage_word(const Stage& s);
  const Stage& stage_of(const Global& g) const;
  void declare(const Token& name, Global global);
  void declare_axis(const Token& name, bool reduction);
  /// Declared names of these kinds, in order (without the stage being parsed).
  std::vector<std::string> names_of(std::initializer_list<Global::Kind> kinds) const;
  /// "M = 0 from --set, N = 512" for the params and lets named in tokens
  /// [begin, end), and the params those lets derive from.
  std::string values_in(std::size_t begin, std::size_t end) const;
  /// The params a let derives from (through other lets too).
  std::set<std::string> params_in(std::size_t begin, std::size_t end) const;
  /// A name on its own: an axis, a param or a let.
  Expr resolve(const Token& t);
  /// A name that is not declared (yet): explains why and what is available.
  [[noreturn]] void not_found(const Token& t, std::string_view what) const;
  std::string names_in_scope() const;
  static void add_names(std::vector<std::string>& parts, std::string_view one,
                        std::string_view many, const std::vector<std::string>& names);
  static std::string example_indices(const Stage& s);
  static std::string shape_text(const Stage& s);
  const Stage& resolve_tensor(const Token& name) const;

  // --- statements (parse_statements.cpp) ---

  void parse_file();
  void parse_op_name();
  void parse_statement();
  /// Skips a statement the ParamsOnly mode does not need.
  void skip_statement();
  /// An element type of a tensor.
  ScalarType parse_type(std::string_view context);
  void parse_input(bool constant);
  void parse_compute(bool is_output);
  void parse_axes(const Token& stage_name);
  /// The right-hand side of a stage, with its declared type applied.
  Expr parse_body(std::optional<ScalarType> declared);
  /// `stage C[...] : T = E` casts E to T. A reduction stays the whole body:
  /// its terms are cast, so the accumulation happens in T.
  static Expr apply_type(ScalarType type, const Expr& body);
  void check_body_type(const Token& start, const Expr& body) const;

  // --- params, lets and overrides (parse_params.cpp) ---

  Override* find_override(std::string_view name);
  void parse_param();
  void parse_let();
  void check_overrides_used() const;

  // --- constant integers (constant_folding.cpp) ---

  std::int64_t literal_value(const Token& literal, bool negative) const;
  /// An integer computed from literals, params and lets. `what` names it in
  /// messages ("the extent of axis 'i'").
  std::int64_t parse_constant(std::string what, bool full_expression);
  /// An extent: a positive constant. `what` names the axis or dimension.
  std::int64_t parse_extent(const std::string& what, bool reduction);
  /// Arithmetic, folded when both sides are constants. `rhs` is the token
  /// index where the right operand starts (for messages).
  Expr make_binary(const Token& op, BinaryOp kind, const Expr& a, const Expr& b, std::size_t rhs);
  [[noreturn]] void division_by_zero(const Token& op, std::size_t rhs) const;
  std::int64_t fold(const Token& op, BinaryOp kind, std::int64_t a, std::int64_t b,
                    std::size_t rhs) const;

  // --- expressions (parse_expr.cpp) ---

  Expr parse_expr();
  Expr parse_or();
  Expr parse_and();
  /// Comparisons do not chain: `a < b < c` is an error, not `(a < b) < c`.
  Expr parse_compare();
  Expr parse_additive();
  Expr parse_multiplicative();
  Expr parse_unary();
  Expr parse_primary();
  Expr parse_name();
  Expr parse_load(const Token& name);
  Expr parse_call(const Token& name);
  Expr make_call(const Token& name, const FunctionInfo& f, const std::vector<Expr>& args,
                 std::size_t rhs);
  [[noreturn]] void unknown_function(const Token& name) const;
  /// With pos_ at the '(' of a call: the index of a `for` directly inside
  /// those parentheses, or 0 when there is none.
  std::size_t find_for();
  Expr parse_reduction(const Token& name);
  std::vector<IterVar> parse_reduction_axes(const Token& name);

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
  int nesting_ = 0;                     ///< see NestingGuard
  std::optional<Token> body_reduction_; ///< the reduction in the current body
};

} // namespace kiln::ir::parse

#endif // KILN_LIB_IR_OP_PARSER_H
