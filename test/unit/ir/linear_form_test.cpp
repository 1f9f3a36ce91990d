#include "kiln/ir/linear_form.h"
#include "kiln/ir/printer.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::ir;

namespace {

std::string canonical(const Expr& e) {
  auto form = linearize_with_atoms(e);
  REQUIRE(form);
  return to_string(to_expr(*form));
}

} // namespace

TEST_CASE("linearize: affine forms, nullopt on div and mod", "[ir][linear_form]") {
  Expr i = Var::make("i"), j = Var::make("j");
  auto f = linearize(i * 4 + j - 2 + i);
  REQUIRE(f);
  REQUIRE(f->coeff("i") == 5);
  REQUIRE(f->coeff("j") == 1);
  REQUIRE(f->constant == -2);
  REQUIRE_FALSE(linearize(i % 4 + j));
  REQUIRE(linearize(Expr(7) / Expr(2))->constant == 3);
}

TEST_CASE("atomic forms: equal div and mod subterms cancel", "[ir][linear_form]") {
  Expr f = Var::make("f"), j = Var::make("j");
  // The index a fused parallel loop leaves after compute_at: the region
  // base is subtracted from the index.
  REQUIRE(canonical(f % 4 * 256 + j - f % 4 * 256) == "j");
  REQUIRE(canonical(f / 2 * 256 + (Expr(0) * 256 + j * 4) - (f / 2 * 256 + j * 4)) == "0");
  // Atoms over operands that are equal once canonical are one atom.
  REQUIRE(canonical((j + f - f) % 4 - j % 4) == "0");
  // Different atoms stay.
  auto form = linearize_with_atoms(f % 4 * 256 + j - f % 2);
  REQUIRE(form);
  REQUIRE(form->atoms.size() == 2);
  REQUIRE(form->linear.coeff("j") == 1);
  REQUIRE(form->atoms_use("f"));
  REQUIRE_FALSE(form->atoms_use("j"));
}

TEST_CASE("atomic forms: the lane variable splits from a lane-free rest", "[ir][linear_form]") {
  Expr f = Var::make("f"), lane = Var::make("lane"), k = Var::make("k");
  auto form = linearize_with_atoms(f % 4 * 256 + k * 32 + lane * 2);
  REQUIRE(form);
  REQUIRE(form->linear.coeff("lane") == 2);
  REQUIRE_FALSE(form->atoms_use("lane"));
  auto rest = without(*form, "lane");
  REQUIRE(to_string(to_expr(rest)) == to_string(k * 32 + f % 4 * 256));
  // A product of variables is an atom too.
  auto product = linearize_with_atoms(lane * k + 1);
  REQUIRE(product);
  REQUIRE(product->atoms_use("lane"));
  REQUIRE(product->linear.constant == 1);
}

TEST_CASE("atomic forms: constants fold, non-integers have none", "[ir][linear_form]") {
  REQUIRE(canonical(Expr(-7) / Expr(2)) == "-4");
  REQUIRE(canonical(Expr(-7) % Expr(2)) == "1");
  REQUIRE_FALSE(linearize_with_atoms(Expr(1.5)));
}

TEST_CASE("coefficients stay sorted by name and never hold a zero", "[ir][linear_form]") {
  Coeffs c{{"k", 2}, {"i", 3}, {"j", -1}};
  std::vector<std::string> names;
  for (const auto& [v, k] : c)
    names.push_back(v);
  REQUIRE(names == std::vector<std::string>{"i", "j", "k"});
  c.add("j", 1); // cancels
  REQUIRE_FALSE(c.count("j"));
  REQUIRE(c.size() == 2);
  c.add("a", 0); // adds nothing
  REQUIRE(c.size() == 2);
  c.scale(-2);
  REQUIRE(c.get("i") == -6);
  REQUIRE(c.get("k") == -4);
  REQUIRE(c.get("absent") == 0);
  c.erase("i");
  c.erase("absent");
  REQUIRE(c == Coeffs{{"k", -4}});
  // The sum of two forms drops the terms that cancel.
  Expr i = Var::make("i"), j = Var::make("j");
  auto f = linearize(i * 2 + j - (i + i));
  REQUIRE(f);
  REQUIRE(f->coeffs == Coeffs{{"j", 1}});
}
