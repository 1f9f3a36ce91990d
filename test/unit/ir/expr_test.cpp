#include "kiln/ir/expr.h"
#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/printer.h"
#include "kiln/support/error.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace kiln;
using namespace kiln::ir;

TEST_CASE("literals adapt to the other operand's type", "[ir][expr]") {
  Expr x = Load::make("X", {Var::make("i")}, ScalarType::F64);
  Expr e = x * 2;
  REQUIRE(e.type() == ScalarType::F64);
  REQUIRE(e.as<Binary>()->b.as<FloatImm>() != nullptr);
  Expr i = Var::make("i") + 1;
  REQUIRE(i.type() == ScalarType::I64);
  Expr f = Load::make("Y", {Var::make("i")}, ScalarType::F32) + 0.5;
  REQUIRE(f.type() == ScalarType::F32);
}

TEST_CASE("mixed int and float promote to float", "[ir][expr]") {
  Expr a = Load::make("A", {Var::make("i")}, ScalarType::I32);
  Expr b = Load::make("B", {Var::make("i")}, ScalarType::F32);
  Expr e = a + b;
  REQUIRE(e.type() == ScalarType::F32);
  REQUIRE(e.as<Binary>()->a.as<Cast>() != nullptr);
}

TEST_CASE("type errors are user errors, not crashes", "[ir][expr]") {
  Expr c = Var::make("i") < 3;
  REQUIRE_THROWS_AS(c + 1, UserError);
  REQUIRE_THROWS_AS(select(Var::make("i"), 1.0, 2.0), UserError);
  REQUIRE_THROWS_AS(logical_and(c, Var::make("j")), UserError);
  REQUIRE_THROWS_AS(Load::make("A", {Expr(1.5)}, ScalarType::F32), UserError);
}

TEST_CASE("printer respects precedence and prints valid op syntax", "[ir][expr]") {
  Expr i = Var::make("i"), j = Var::make("j");
  REQUIRE(to_string((i + j) * 2) == "(i + j) * 2");
  REQUIRE(to_string(i + j * 2) == "i + j * 2");
  REQUIRE(to_string(i - (j - 1)) == "i - (j - 1)");
  REQUIRE(to_string((i - j) - 1) == "i - j - 1");
  REQUIRE(to_string(logical_and(i < 3, j >= 0)) == "i < 3 && j >= 0");
  REQUIRE(to_string(logical_or(logical_and(i < 3, j >= 0), i == j)) == "i < 3 && j >= 0 || i == j");
  REQUIRE(to_string(logical_and(logical_or(i < 3, j >= 0), i == j)) ==
          "(i < 3 || j >= 0) && i == j");
  REQUIRE(to_string(max(Load::make("A", {i, j}, ScalarType::F32), 0.0)) == "max(A[i, j], 0.0)");
  REQUIRE(to_string(sum(Load::make("A", {i, Var::make("k")}, ScalarType::F32), {{"k", 8}})) ==
          "sum(A[i, k] for k < 8)");
  REQUIRE(format_float(-std::numeric_limits<double>::infinity()) == "-inf");
  REQUIRE(format_float(1e-3) == "0.001");
}

TEST_CASE("substitute replaces variables and keeps untouched trees shared", "[ir][expr]") {
  Expr i = Var::make("i"), j = Var::make("j");
  Expr e = i * 4 + j;
  Expr s = substitute(e, {{"i", Var::make("io") * 2 + Var::make("ii")}});
  REQUIRE(to_string(s) == "(io * 2 + ii) * 4 + j");
  Expr same = substitute(e, {{"q", Expr(1)}});
  REQUIRE(same.same_as(e));
  REQUIRE(equal(substitute(s, {}), s));
  REQUIRE_FALSE(equal(s, e));
}
