// The API of the op language parser (kiln/ir/parser.h); the parser itself
// is described in op_parser.h.
#include "kiln/ir/parser.h"

#include "op_parser.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::ir {

namespace parse {

Parser::Parser(const SourceText& source, std::vector<Override> overrides, Mode mode)
    : source_(source), tokens_(lex(source)), overrides_(std::move(overrides)), mode_(mode) {
  prescan();
}

ParsedOp Parser::run() {
  parse_file();
  return std::move(result_);
}

} // namespace parse

using parse::check_overrides;
using parse::Mode;
using parse::Override;
using parse::ParsedOp;
using parse::Parser;

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

} // namespace kiln::ir
