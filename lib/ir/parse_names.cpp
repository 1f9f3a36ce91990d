// Names in the parser: the prescan of declarations and reduction axes, the
// declared params, lets and tensors, the axes in scope, and the messages
// about a name that cannot be used here (with a suggestion when it looks
// like a typo).
#include "op_parser.h"

#include <fmt/format.h>

#include <algorithm>

namespace kiln::ir::parse {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
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

std::string suggestion(std::string_view name, const std::vector<std::string>& candidates) {
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

void Parser::prescan() {
  for (std::size_t i = 0; i + 1 < tokens_.size(); ++i) {
    const Token& t = tokens_[i];
    const Token& next = tokens_[i + 1];
    if (starts_statement(t) && !t.is_word("op") && next.is(TokenKind::Identifier))
      declared_later_.emplace(std::string(next.text), std::make_pair(t.text, next));
    if (t.is_word("for"))
      prescan_reduction_axes(i + 1);
  }
}

void Parser::prescan_reduction_axes(std::size_t i) {
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

const Global* Parser::find_global(std::string_view name) const {
  auto it = globals_.find(std::string(name));
  return it == globals_.end() ? nullptr : &it->second;
}

const Axis* Parser::find_axis(std::string_view name) const {
  for (const Axis& a : axes_)
    if (a.name == name)
      return &a;
  return nullptr;
}

std::string_view Parser::kind_name(Global::Kind kind) {
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

std::string Parser::describe_global(const Global& g) const {
  if (g.kind != Global::Tensor)
    return fmt::format("{} '{}'", kind_name(g.kind), g.decl.text);
  const Stage& s = stage_of(g);
  return fmt::format("{} '{}'", stage_word(s), s.name);
}

std::string_view Parser::stage_word(const Stage& s) {
  if (s.is_placeholder())
    return "input";
  return s.is_output ? "output" : "stage";
}

const Stage& Parser::stage_of(const Global& g) const {
  if (g.stage == static_cast<int>(result_.stages.size()))
    return current_;
  return result_.stages.at(g.stage);
}

void Parser::declare(const Token& name, Global global) {
  if (const Global* g = find_global(name.text))
    fail(name, "duplicate-name",
         fmt::format("'{}' is already declared as {} at {}; choose another name", name.text,
                     describe_global(*g), where(g->decl)));
  global.decl = name;
  globals_.emplace(std::string(name.text), std::move(global));
  order_.emplace_back(name.text);
}

void Parser::declare_axis(const Token& name, bool reduction) {
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

std::vector<std::string> Parser::names_of(std::initializer_list<Global::Kind> kinds) const {
  std::vector<std::string> names;
  for (const std::string& name : order_) {
    const Global& g = globals_.at(name);
    bool current = g.kind == Global::Tensor && &stage_of(g) == &current_;
    if (!current && std::find(kinds.begin(), kinds.end(), g.kind) != kinds.end())
      names.push_back(name);
  }
  return names;
}

std::string Parser::values_in(std::size_t begin, std::size_t end) const {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(name);
  };
  for (std::size_t i = begin; i < end; ++i) {
    const Global* g = tokens_[i].is(TokenKind::Identifier) ? find_global(tokens_[i].text) : nullptr;
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

std::set<std::string> Parser::params_in(std::size_t begin, std::size_t end) const {
  std::set<std::string> params;
  for (std::size_t i = begin; i < end; ++i) {
    const Global* g = tokens_[i].is(TokenKind::Identifier) ? find_global(tokens_[i].text) : nullptr;
    if (g && g->kind == Global::Param)
      params.insert(std::string(tokens_[i].text));
    if (g && g->kind == Global::Let)
      params.insert(g->params.begin(), g->params.end());
  }
  return params;
}

Expr Parser::resolve(const Token& t) {
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

void Parser::not_found(const Token& t, std::string_view what) const {
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
  if (is_function(name))
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

std::string Parser::names_in_scope() const {
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

void Parser::add_names(std::vector<std::string>& parts, std::string_view one, std::string_view many,
                       const std::vector<std::string>& names) {
  if (!names.empty())
    parts.push_back(fmt::format("{} {}", names.size() == 1 ? one : many, join(names)));
}

std::string Parser::example_indices(const Stage& s) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < s.axes.size(); ++i)
    names.push_back(s.is_placeholder() ? std::string(1, static_cast<char>('i' + i % 18))
                                       : s.axes[i].name);
  return join(names);
}

std::string Parser::shape_text(const Stage& s) {
  std::vector<std::string> extents;
  for (const IterVar& a : s.axes)
    extents.push_back(std::to_string(a.extent));
  return fmt::format("{}[{}]", type_name(s.dtype), join(extents));
}

const Stage& Parser::resolve_tensor(const Token& name) const {
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
         fmt::format("'{}' is a {}, not a tensor; only inputs and stages can be indexed", name.text,
                     kind_name(g->kind)));
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

} // namespace kiln::ir::parse
