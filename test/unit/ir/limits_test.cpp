// The size limits of ir/limits.h and the static bounds check: hostile input
// is a clear error, and what is inside the limits works end to end.
#include "kiln/ir/builder.h"
#include "kiln/ir/limits.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <string>

using namespace kiln;
using namespace kiln::ir;

static Error parse_error(const std::string& text) {
  Expected<ComputeDAG> dag = parse_op(text, "test.kop");
  REQUIRE_FALSE(dag.ok());
  return dag.error();
}

static std::string repeat(std::string_view s, int n, std::string_view separator = "") {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += std::string(i ? separator : "") + std::string(s);
  return out;
}

TEST_CASE("expression nodes know their depth", "[ir][limits]") {
  Expr x = Var::make("x");
  REQUIRE(x.depth() == 1);
  REQUIRE((x + 1).depth() == 2);
  REQUIRE(select(x < 3, x * 2, x).depth() == 3);
  REQUIRE(Expr().depth() == 0);
}

TEST_CASE("deep input is refused where it gets too deep, not by a stack overflow", "[ir][limits]") {
  const std::string head = "op deep\ninput A : f32[4]\noutput B[i < 4] = ";
  for (const std::string& body :
       {repeat("(", 100000) + "A[i]" + repeat(")", 100000), repeat("-", 100000) + "A[i]",
        repeat("!", 100000) + "(A[i] > 0)", repeat("A[i]", 100000, " + "),
        repeat("exp(", 100000) + "A[i]" + repeat(")", 100000),
        "A[" + repeat("i + ", 100000) + "0]"}) {
    Error e = parse_error(head + body + "\n");
    CAPTURE(body.substr(0, 40));
    REQUIRE(e.id() == "limit-exceeded");
    REQUIRE_THAT(e.message(), Catch::Contains("more than 256 levels deep"));
    REQUIRE(e.location().line == 3);
  }
}

TEST_CASE("an expression at the depth limit parses, prints and parses back", "[ir][limits]") {
  // A chain of n loads nests n + 1 levels.
  const int terms = static_cast<int>(kMaxExprDepth) - 1;
  std::string text =
      "op deep\ninput A : f32[4]\noutput B[i < 4] = " + repeat("A[i]", terms, " + ") + "\n";
  Expected<ComputeDAG> dag = parse_op(text, "test.kop");
  REQUIRE(dag.ok());
  REQUIRE(dag->stage(1).body.depth() == kMaxExprDepth);
  Expected<ComputeDAG> again = parse_op(dag->to_string(), "printed.kop");
  REQUIRE(again.ok());
  REQUIRE(again->workload_key() == dag->workload_key());
  REQUIRE(parse_error("op deep\ninput A : f32[4]\noutput B[i < 4] = " +
                      repeat("A[i]", terms + 1, " + ") + "\n")
              .id() == "limit-exceeded");
}

TEST_CASE("stage and dimension counts are limited", "[ir][limits]") {
  std::string text = "op chain\ninput A : f32[4]\nstage B0[i < 4] = A[i]\n";
  for (int k = 1; k < kMaxStages - 2; ++k)
    text += fmt::format("stage B{}[i < 4] = B{}[i]\n", k, k - 1);
  // kMaxStages stages: the input, kMaxStages - 2 stages and the output.
  REQUIRE(parse_op(text + fmt::format("output C[i < 4] = B{}[i]\n", kMaxStages - 3), "t").ok());
  Error e = parse_error(text + fmt::format("stage X[i < 4] = A[i]\noutput C[i < 4] = X[i]\n"));
  REQUIRE(e.id() == "limit-exceeded");
  REQUIRE_THAT(e.message(), Catch::Contains("an op has at most 512 stages"));

  REQUIRE(parse_error("op wide\ninput A : f32[" + repeat("1", kMaxDimensions + 1, ", ") +
                      "]\noutput B[i < 1] = A[i]\n")
              .id() == "limit-exceeded");
  std::string axes;
  for (int d = 0; d <= kMaxDimensions; ++d)
    axes += fmt::format("{}i{} < 1", d ? ", " : "", d);
  REQUIRE(parse_error("op wide\ninput A : f32[1]\noutput B[" + axes + "] = A[0]\n").id() ==
          "limit-exceeded");
}

TEST_CASE("the C++ builder checks the same limits", "[ir][limits]") {
  auto build_deep = [] {
    DAGBuilder b("deep");
    Tensor A = b.input("A", {4});
    Tensor B = b.compute("B", {{"i", 4}}, [&](const std::vector<Expr>& v) {
      Expr e = A(v[0]);
      for (std::uint32_t k = 0; k < kMaxExprDepth; ++k)
        e = e + 1.0f;
      return e;
    });
    b.output(B);
    return std::move(b).build();
  };
  try {
    (void)build_deep();
    FAIL("a body deeper than the limit was accepted");
  } catch (const UserError& e) {
    REQUIRE(e.error().id() == "limit-exceeded");
  }
}

TEST_CASE("sizes that do not fit in 64 bits are refused, not wrapped", "[ir][limits]") {
  const std::string big = std::to_string(std::int64_t{1} << 62);
  Error e =
      parse_error("op big\ninput A : f32[" + big + ", " + big + "]\noutput B[i < 1] = A[i, i]\n");
  REQUIRE(e.id() == "too-large");
  // 2^62 elements of 4 bytes is 2^64 bytes.
  REQUIRE(parse_error("op big\ninput A : f32[" + big + "]\noutput B[i < 1] = A[i]\n").id() ==
          "too-large");
  Error r = parse_error("op big\ninput A : f32[1]\noutput B[i < 2147483648] = sum(A[0] for k < "
                        "2147483648, j < 2147483648)\n");
  REQUIRE(r.id() == "too-large");
  REQUIRE_THAT(r.message(), Catch::Contains("more than 2^63 points"));
}

TEST_CASE("affine reads are checked against the tensor's bounds", "[ir][bounds]") {
  auto check = [](const std::string& body) {
    return parse_op("op b\ninput A : f32[4, 6]\noutput B[i < 4, j < 3] = " + body + "\n", "t");
  };
  // In bounds, including through guards of one axis against a constant.
  for (const char* ok :
       {"A[i, j]", "A[3 - i, 2 * j + 1]", "A[i, j + 3]", "select(i >= 1, A[i - 1, j], 0.0)",
        "select(i < 1, 0.0, A[i - 1, j])", "select(i >= 1 && j <= 1, A[i - 1, j + 4], 0.0)",
        "sum(A[i, k] for k < 6)", "A[i % 4, j]",
        // Guards it cannot read exactly are left to the interpreter.
        "select(i + j >= 1, A[i - 1, j], 0.0)"}) {
    CAPTURE(ok);
    auto dag = check(ok);
    if (!dag)
      FAIL(dag.error().render());
  }
  for (const char* bad :
       {"A[i + 1, j]", "A[i, 3 * j]", "A[i - 1, j]", "select(i >= 1, A[i, j + 4], 0.0)",
        "select(i < 1, A[i - 1, j], 0.0)", "sum(A[i, k] for k < 7)"}) {
    CAPTURE(bad);
    auto dag = check(bad);
    REQUIRE_FALSE(dag.ok());
    REQUIRE(dag.error().id() == "index-out-of-bounds");
    REQUIRE_THAT(dag.error().message(), Catch::Contains("out of bounds: index"));
  }
}
