#include "kiln/ir/linear_form.h"

#include "kiln/ir/expr_visitor.h"

#include <algorithm>
#include <vector>

namespace kiln::ir {

Coeffs::Coeffs(std::initializer_list<Term> terms) {
  for (const Term& t : terms)
    add(t.first, t.second);
}

/// Where `var` is or would go in sorted terms (const or not).
template <typename Terms> static auto position(Terms& terms, std::string_view var) {
  return std::lower_bound(terms.begin(), terms.end(), var,
                          [](const Coeffs::Term& t, std::string_view v) { return t.first < v; });
}

std::vector<Coeffs::Term>::const_iterator Coeffs::find(std::string_view var) const {
  auto it = position(terms_, var);
  return it != terms_.end() && it->first == var ? it : terms_.end();
}

std::int64_t Coeffs::get(std::string_view var) const {
  auto it = find(var);
  return it == terms_.end() ? 0 : it->second;
}

void Coeffs::add(std::string_view var, std::int64_t k) {
  if (k == 0)
    return;
  auto it = position(terms_, var);
  if (it == terms_.end() || it->first != var) {
    terms_.insert(it, Term{std::string(var), k});
    return;
  }
  it->second += k;
  if (it->second == 0)
    terms_.erase(it);
}

void Coeffs::erase(std::string_view var) {
  auto it = position(terms_, var);
  if (it != terms_.end() && it->first == var)
    terms_.erase(it);
}

void Coeffs::scale(std::int64_t k) {
  for (Term& t : terms_)
    t.second *= k;
}

LinearForm scaled(LinearForm f, std::int64_t k) {
  if (k == 0)
    return {};
  f.coeffs.scale(k);
  f.constant *= k;
  return f;
}

LinearForm added(LinearForm a, const LinearForm& b, std::int64_t sign) {
  for (const auto& [v, c] : b.coeffs)
    a.coeffs.add(v, sign * c);
  a.constant += sign * b.constant;
  return a;
}

std::optional<LinearForm> linearize(const Expr& e) {
  if (!is_int(e.type()))
    return std::nullopt;
  if (const auto* i = e.as<IntImm>())
    return LinearForm{{}, i->value};
  if (const auto* v = e.as<Var>())
    return LinearForm{{{v->name, 1}}, 0};
  if (const auto* c = e.as<Cast>())
    return is_int(c->value.type()) ? linearize(c->value) : std::nullopt;
  const auto* b = e.as<Binary>();
  if (!b)
    return std::nullopt;
  auto x = linearize(b->a);
  auto y = linearize(b->b);
  if (!x || !y)
    return std::nullopt;
  switch (b->op) {
  case BinaryOp::Add:
    return added(std::move(*x), *y, 1);
  case BinaryOp::Sub:
    return added(std::move(*x), *y, -1);
  case BinaryOp::Mul:
    if (x->coeffs.empty())
      return scaled(std::move(*y), x->constant);
    if (y->coeffs.empty())
      return scaled(std::move(*x), y->constant);
    return std::nullopt;
  case BinaryOp::Div:
  case BinaryOp::Mod:
    if (x->coeffs.empty() && y->coeffs.empty() && y->constant != 0) {
      std::int64_t a = x->constant, d = y->constant;
      return LinearForm{{}, b->op == BinaryOp::Div ? floor_div(a, d) : floor_mod(a, d)};
    }
    return std::nullopt;
  case BinaryOp::Min:
  case BinaryOp::Max:
    return std::nullopt;
  }
  return std::nullopt;
}

Expr to_expr(const LinearForm& form) {
  Expr out;
  for (const auto& [v, c] : form.coeffs) {
    Expr term = c == 1 ? Var::make(v) : Var::make(v) * Expr(c);
    out = out.defined() ? out + term : term;
  }
  if (!out.defined())
    return Expr(form.constant);
  if (form.constant == 0)
    return out;
  return form.constant > 0 ? out + Expr(form.constant) : out - Expr(-form.constant);
}

namespace {

/// Builds atomic forms, numbering the distinct atoms (structurally equal
/// atoms get one key) of one top-level expression.
class AtomicLinearizer {
public:
  AtomicForm run(const Expr& e) {
    LinearForm linear = form_of(e);
    AtomicForm out{std::move(linear), {}};
    for (size_t i = 0; i < atoms_.size(); ++i)
      if (out.linear.coeffs.count(key(i)))
        out.atoms.emplace(key(i), atoms_[i]);
    return out;
  }

private:
  LinearForm form_of(const Expr& e) {
    if (e.type() != ScalarType::I64)
      return atom(e);
    if (const auto* i = e.as<IntImm>())
      return LinearForm{{}, i->value};
    if (const auto* v = e.as<Var>())
      return LinearForm{{{v->name, 1}}, 0};
    if (const auto* c = e.as<Cast>())
      return c->value.type() == ScalarType::I64 ? form_of(c->value) : atom(e);
    const auto* b = e.as<Binary>();
    if (!b)
      return atom(e);
    LinearForm x = form_of(b->a), y = form_of(b->b);
    switch (b->op) {
    case BinaryOp::Add:
      return added(std::move(x), y, 1);
    case BinaryOp::Sub:
      return added(std::move(x), y, -1);
    case BinaryOp::Mul:
      if (x.coeffs.empty())
        return scaled(std::move(y), x.constant);
      if (y.coeffs.empty())
        return scaled(std::move(x), y.constant);
      break;
    case BinaryOp::Div:
    case BinaryOp::Mod:
      if (x.coeffs.empty() && y.coeffs.empty() && y.constant != 0)
        return *linearize(Binary::make(b->op, Expr(x.constant), Expr(y.constant)));
      break;
    case BinaryOp::Min:
    case BinaryOp::Max:
      break;
    }
    // Not affine: one atom over canonical operands, so that `(a + b - b) % 4`
    // and `a % 4` are the same atom.
    return atom(Binary::make(b->op, rebuild(x), rebuild(y)));
  }

  Expr rebuild(const LinearForm& f) {
    AtomicForm form{f, {}};
    for (const auto& [k, c] : f.coeffs)
      if (AtomicForm::is_atom_key(k))
        form.atoms.emplace(k, atoms_[index(k)]);
    return to_expr(form);
  }

  LinearForm atom(const Expr& e) {
    for (size_t i = 0; i < atoms_.size(); ++i)
      if (equal(atoms_[i], e))
        return LinearForm{{{key(i), 1}}, 0};
    atoms_.push_back(e);
    return LinearForm{{{key(atoms_.size() - 1), 1}}, 0};
  }

  static std::string key(size_t i) {
    // Zero-padded so that keys sort in the order atoms were first met.
    std::string digits = std::to_string(i);
    return std::string(1, AtomicForm::kAtomKeyPrefix) + std::string(8 - digits.size(), '0') +
           digits;
  }
  static size_t index(const std::string& key) { return std::stoul(key.substr(1)); }

  std::vector<Expr> atoms_;
};

} // namespace

bool AtomicForm::atoms_use(const std::string& var) const {
  for (const auto& [k, atom] : atoms) {
    if (!linear.coeffs.count(k))
      continue;
    if (uses_var(atom, var))
      return true;
  }
  return false;
}

std::optional<AtomicForm> linearize_with_atoms(const Expr& e) {
  if (!is_int(e.type()))
    return std::nullopt;
  return AtomicLinearizer().run(e);
}

Expr to_expr(const AtomicForm& form) {
  Expr out;
  auto add_term = [&](Expr term, std::int64_t c) {
    if (c != 1)
      term = term * Expr(c);
    out = out.defined() ? out + term : term;
  };
  for (const auto& [k, c] : form.linear.coeffs)
    if (!AtomicForm::is_atom_key(k))
      add_term(Var::make(k), c);
  for (const auto& [k, c] : form.linear.coeffs)
    if (AtomicForm::is_atom_key(k))
      add_term(form.atoms.at(k), c);
  const std::int64_t k = form.linear.constant;
  if (!out.defined())
    return Expr(k);
  if (k == 0)
    return out;
  return k > 0 ? out + Expr(k) : out - Expr(-k);
}

AtomicForm without(AtomicForm form, const std::string& key) {
  form.linear.coeffs.erase(key);
  form.atoms.erase(key);
  return form;
}

std::optional<Interval> bounds_of(const LinearForm& form,
                                  const std::map<std::string, std::int64_t>& extents) {
  Interval r{form.constant, form.constant};
  for (const auto& [v, c] : form.coeffs) {
    auto it = extents.find(v);
    if (it == extents.end() || it->second <= 0)
      return std::nullopt;
    const Interval term = *combine(Interval{0, it->second - 1}, Interval{c, c}, BinaryOp::Mul);
    r = *combine(r, term, BinaryOp::Add);
  }
  return r;
}

std::optional<Interval> bounds_of(const Expr& e,
                                  const std::map<std::string, std::int64_t>& extents) {
  if (!is_int(e.type()))
    return std::nullopt;
  if (const auto* i = e.as<IntImm>())
    return Interval{i->value, i->value};
  if (const auto* v = e.as<Var>()) {
    auto it = extents.find(v->name);
    if (it == extents.end() || it->second <= 0)
      return std::nullopt;
    return Interval{0, it->second - 1};
  }
  if (const auto* c = e.as<Cast>())
    return is_int(c->value.type()) ? bounds_of(c->value, extents) : std::nullopt;
  const auto* b = e.as<Binary>();
  if (!b)
    return std::nullopt;
  // An affine expression is bounded term by term, which is exact (each
  // variable appears once); other shapes use interval arithmetic.
  if (auto f = linearize(e))
    return bounds_of(*f, extents);
  auto x = bounds_of(b->a, extents);
  auto y = bounds_of(b->b, extents);
  if (!x || !y)
    return std::nullopt;
  return combine(*x, *y, b->op);
}

} // namespace kiln::ir
