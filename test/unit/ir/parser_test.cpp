#include "test_dags.h"

#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>

using namespace kiln;
using namespace kiln::ir;

static std::string op_path(const std::string& name) {
  return std::string(KILN_SOURCE_DIR) + "/ops/" + name + ".kop";
}

static ComputeDAG parse_ok(std::string_view text, const ParamOverrides& overrides = {}) {
  Expected<ComputeDAG> dag = parse_op(text, "test.kop", overrides);
  if (!dag)
    FAIL(dag.error().render());
  return std::move(*dag);
}

static ComputeDAG parse_file_ok(const std::string& name, const ParamOverrides& overrides = {}) {
  Expected<ComputeDAG> dag = parse_op_file(op_path(name), overrides);
  if (!dag)
    FAIL(dag.error().render());
  return std::move(*dag);
}

static Error parse_error(std::string_view text, const ParamOverrides& overrides = {}) {
  Expected<ComputeDAG> dag = parse_op(text, "test.kop", overrides);
  if (dag)
    FAIL("expected an error, got:\n" << dag->to_string());
  return dag.error();
}

/// The body of the op's last stage, for expression tests.
static Expr output_body(std::string_view body, std::string_view inputs = "") {
  std::string text = fmt::format("op t\ninput A : f32[8]\ninput D : f64[8]\ninput I : i32[8]\n{}\n"
                                 "output C[i < 8] = {}\n",
                                 inputs, body);
  ComputeDAG dag = parse_ok(text);
  return dag.stages().back().body;
}

static std::vector<std::int64_t> shape_of(const ComputeDAG& dag, std::string_view name) {
  int index = dag.find_stage(name);
  REQUIRE(index >= 0);
  return dag.stage(index).shape();
}

TEST_CASE("every op in ops/ parses with small parameters", "[parser]") {
  SECTION("matmul") {
    ComputeDAG dag = parse_file_ok("matmul", {{"M", "8"}, {"N", "4"}, {"K", "2"}});
    REQUIRE(dag.name() == "matmul");
    REQUIRE(dag.stages().size() == 3);
    REQUIRE(shape_of(dag, "A") == std::vector<std::int64_t>{8, 2});
    REQUIRE(shape_of(dag, "C") == std::vector<std::int64_t>{8, 4});
    REQUIRE(dag.stage(2).is_output);
    REQUIRE(dag.stage(2).reduction() != nullptr);
    REQUIRE(dag.params() == std::vector<Param>{{"M", 8}, {"N", 4}, {"K", 2}});
  }
  SECTION("batch_matmul") {
    ComputeDAG dag = parse_file_ok("batch_matmul", {{"BATCH", "2"}, {"M", "3"}});
    REQUIRE(dag.stages().size() == 3);
    REQUIRE(shape_of(dag, "C") == std::vector<std::int64_t>{2, 3, 128});
  }
  SECTION("dense_bias_relu") {
    ComputeDAG dag = parse_file_ok("dense_bias_relu", {{"BATCH", "2"}, {"IN", "3"}, {"OUT", "4"}});
    REQUIRE(dag.stages().size() == 6);
    REQUIRE(dag.intermediates() == std::vector<int>{3, 4});
    REQUIRE(dag.stage(5).is_output);
    REQUIRE(dag.stage(5).body.as<Binary>()->op == BinaryOp::Max);
    REQUIRE(shape_of(dag, "relu") == std::vector<std::int64_t>{2, 4});
  }
  SECTION("conv2d_nchw") {
    ComputeDAG dag = parse_file_ok("conv2d_nchw", {{"C", "2"}, {"H", "5"}, {"W", "6"}, {"K", "3"}});
    REQUIRE(dag.stages().size() == 4);
    REQUIRE(shape_of(dag, "padded") == std::vector<std::int64_t>{1, 2, 7, 8});
    REQUIRE(shape_of(dag, "conv") == std::vector<std::int64_t>{1, 3, 5, 6});
    REQUIRE(dag.stage(2).body.as<Select>() != nullptr);
    REQUIRE(dag.stage(3).reduction()->axes.size() == 3);
  }
  SECTION("conv2d_nchw with stride 2 and no padding") {
    ComputeDAG dag = parse_file_ok(
        "conv2d_nchw",
        {{"H", "7"}, {"W", "7"}, {"stride", "2"}, {"pad", "0"}, {"C", "1"}, {"K", "1"}});
    REQUIRE(shape_of(dag, "conv") == std::vector<std::int64_t>{1, 1, 3, 3});
  }
  SECTION("depthwise_conv2d") {
    ComputeDAG dag = parse_file_ok("depthwise_conv2d", {{"C", "2"}, {"H", "4"}, {"W", "4"}});
    REQUIRE(dag.stages().size() == 4);
    REQUIRE(shape_of(dag, "dwconv") == std::vector<std::int64_t>{1, 2, 4, 4});
    REQUIRE(dag.stage(3).reduction()->axes.size() == 2);
  }
  SECTION("max_pool2d") {
    ComputeDAG dag = parse_file_ok("max_pool2d", {{"C", "2"}, {"H", "8"}, {"W", "8"}});
    REQUIRE(dag.stages().size() == 3);
    REQUIRE(shape_of(dag, "pool") == std::vector<std::int64_t>{1, 2, 4, 4});
    REQUIRE(dag.stage(2).reduction()->op == ReduceOp::Max);
  }
  SECTION("softmax") {
    ComputeDAG dag = parse_file_ok("softmax", {{"M", "3"}, {"N", "5"}});
    REQUIRE(dag.stages().size() == 5);
    REQUIRE(dag.stage(1).reduction()->op == ReduceOp::Max);
    REQUIRE(dag.stage(3).reduction()->op == ReduceOp::Sum);
    REQUIRE(dag.arguments() == std::vector<int>{0, 4});
    REQUIRE(shape_of(dag, "row_sum") == std::vector<std::int64_t>{3});
  }
  SECTION("layer_norm") {
    ComputeDAG dag = parse_file_ok("layer_norm", {{"M", "3"}, {"N", "5"}});
    REQUIRE(dag.stages().size() == 7);
    REQUIRE(dag.arguments() == std::vector<int>{0, 1, 2, 6});
    REQUIRE(dag.stage(3).reduction()->op == ReduceOp::Sum);
    REQUIRE(dag.stage(5).reduction()->op == ReduceOp::Sum);
    REQUIRE(shape_of(dag, "gamma") == std::vector<std::int64_t>{5});
  }
  SECTION("transpose") {
    ComputeDAG dag = parse_file_ok("transpose", {{"M", "3"}, {"N", "5"}});
    REQUIRE(shape_of(dag, "B") == std::vector<std::int64_t>{5, 3});
  }
  SECTION("row_sum") {
    ComputeDAG dag = parse_file_ok("row_sum", {{"M", "3"}});
    REQUIRE(shape_of(dag, "S") == std::vector<std::int64_t>{3});
  }
}

TEST_CASE("every op's printed text parses back to the same workload key", "[parser]") {
  std::vector<std::string> ops;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(KILN_SOURCE_DIR) + "/ops"))
    if (entry.path().extension() == ".kop")
      ops.push_back(entry.path().stem().string());
  REQUIRE(ops.size() >= 9);
  for (const std::string& name : ops) {
    INFO(name);
    ComputeDAG dag = parse_file_ok(name);
    Expected<ComputeDAG> again = parse_op(dag.to_string(), "<printed>");
    if (!again)
      FAIL(again.error().render());
    REQUIRE(again->to_string() == dag.to_string());
    REQUIRE(again->workload_key() == dag.workload_key());
  }
}

TEST_CASE("a parsed op equals the same op built in C++", "[parser]") {
  ComputeDAG parsed = parse_file_ok("matmul", {{"M", "8"}, {"N", "4"}, {"K", "2"}});
  ComputeDAG built = test::matmul_dag(8, 4, 2);
  REQUIRE(parsed.workload_key() == built.workload_key());
  REQUIRE(parsed.params() == built.params());
}

TEST_CASE("overriding parameters with --set", "[parser]") {
  const char* text = "op t\nparam M = 4\nparam N = 2\nlet MN = M * N\ninput A : f32[MN]\n"
                     "output C[i < MN] = A[i]\n";
  SECTION("defaults") {
    REQUIRE(shape_of(parse_ok(text), "C") == std::vector<std::int64_t>{8});
  }
  SECTION("a set param changes the lets derived from it") {
    ComputeDAG dag = parse_ok(text, {{"M", "5"}});
    REQUIRE(shape_of(dag, "C") == std::vector<std::int64_t>{10});
    REQUIRE(dag.params() == std::vector<Param>{{"M", 5}, {"N", 2}});
  }
  SECTION("the last --set of a name wins") {
    REQUIRE(shape_of(parse_ok(text, {{"M", "5"}, {"M", "3"}}), "C") ==
            std::vector<std::int64_t>{6});
  }
  SECTION("signs and spaces") {
    REQUIRE(shape_of(parse_ok(text, {{"M", "+3"}}), "C") == std::vector<std::int64_t>{6});
  }
  SECTION("unknown parameter") {
    Error e = parse_error(text, {{"Q", "1"}});
    REQUIRE(e.id() == "unknown-set-param");
    REQUIRE(!e.location().valid());
    REQUIRE(e.message().rfind("--set Q=1: ", 0) == 0);
    REQUIRE_THAT(e.message(), Catch::Contains("its parameters are M, N"));
  }
  SECTION("not an integer") {
    for (const char* bad : {"x", "1.5", "", "3x"}) {
      Error e = parse_error(text, {{"M", bad}});
      REQUIRE(e.id() == "set-not-integer");
      REQUIRE(e.message().rfind(fmt::format("--set M={}: ", bad), 0) == 0);
    }
    Error big = parse_error(text, {{"M", "99999999999999999999"}});
    REQUIRE(big.id() == "set-out-of-range");
    REQUIRE_THAT(big.message(), Catch::Contains("does not fit 64 bits"));
  }
  SECTION("a let cannot be set") {
    Error e = parse_error(text, {{"MN", "3"}});
    REQUIRE(e.id() == "set-derived");
    REQUIRE_THAT(e.message(), Catch::Contains("(M, N)"));
  }
  SECTION("extents made nonpositive by --set name the parameter") {
    Error e = parse_error(text, {{"N", "0"}});
    REQUIRE(e.id() == "nonpositive-extent");
    REQUIRE(e.location().line == 5);
    REQUIRE_THAT(e.message(), Catch::Contains("N = 0 from --set"));
  }
}

TEST_CASE("parse_override splits NAME=VALUE", "[parser]") {
  auto kv = parse_override("M=512");
  REQUIRE(kv.ok());
  REQUIRE(kv->first == "M");
  REQUIRE(kv->second == "512");
  REQUIRE(parse_override("K = 3=4")->second == "3=4");
  REQUIRE(parse_override("M512").error().id() == "bad-set-syntax");
  REQUIRE(parse_override("=5").error().id() == "bad-set-syntax");
}

TEST_CASE("parse_op_params lists params and lets", "[parser]") {
  auto decls = parse_op_params("op t\nparam M = 4 # rows\nparam N = -2\nlet X = M * N\n"
                               "output C[i < UNDEFINED] = nonsense(\n  )\n",
                               "t.kop");
  REQUIRE(decls.ok());
  REQUIRE(decls->size() == 3);
  REQUIRE((*decls)[0].name == "M");
  REQUIRE((*decls)[0].default_value == 4);
  REQUIRE(!(*decls)[0].derived);
  REQUIRE((*decls)[1].default_value == -2);
  REQUIRE((*decls)[2].name == "X");
  REQUIRE((*decls)[2].default_value == -8);
  REQUIRE((*decls)[2].derived);
  auto conv = parse_op_params("op t\n", "t.kop");
  REQUIRE(conv->empty());
}

static std::int64_t let_value(const std::string& expr) {
  auto decls = parse_op_params("op t\nparam M = 7\nlet X = " + expr + "\n", "t.kop");
  if (!decls)
    FAIL(decls.error().render());
  return decls->back().default_value;
}

TEST_CASE("integer division and modulo in lets are floored", "[parser]") {
  REQUIRE(let_value("-7 / 2") == -4);
  REQUIRE(let_value("7 / 2") == 3);
  REQUIRE(let_value("7 / -2") == -4);
  REQUIRE(let_value("-7 % 2") == 1);
  REQUIRE(let_value("7 % -2") == -1);
  REQUIRE(let_value("-M / 2") == -4);
  REQUIRE(let_value("min(M, 3) + max(M, 3) * 2") == 17);
  REQUIRE(let_value("(M + 1) * 2 - -M") == 23);
  REQUIRE(let_value("-9223372036854775808 / 2") == std::numeric_limits<std::int64_t>::min() / 2);
  REQUIRE(let_value("(M +\n   1) * 2") == 16);
}

TEST_CASE("precedence and associativity", "[parser]") {
  SECTION("* binds tighter than +") {
    Expr e = output_body("A[i] + A[i] * 2.0");
    const Binary* add = e.as<Binary>();
    REQUIRE(add->op == BinaryOp::Add);
    REQUIRE(add->b.as<Binary>()->op == BinaryOp::Mul);
  }
  SECTION("- and / are left associative") {
    REQUIRE(let_value("10 - 4 - 3") == 3);
    REQUIRE(let_value("64 / 4 / 2") == 8);
    Expr e = output_body("A[i] - A[i] - 1.0");
    REQUIRE(e.as<Binary>()->a.as<Binary>() != nullptr);
  }
  SECTION("unary minus binds tighter than *") {
    Expr e = output_body("-A[i] * 2.0");
    REQUIRE(e.as<Binary>()->op == BinaryOp::Mul);
  }
  SECTION("&& binds tighter than ||, comparisons tighter than &&") {
    Expr e = output_body("select(i < 1 || i > 2 && i != 5, 1.0, 0.0)");
    const Logical* orr = e.as<Select>()->cond.as<Logical>();
    REQUIRE(orr->op == LogicalOp::Or);
    REQUIRE(orr->a.as<Compare>()->op == CompareOp::LT);
    REQUIRE(orr->b.as<Logical>()->op == LogicalOp::And);
  }
  SECTION("parentheses") {
    REQUIRE(let_value("2 * (3 + 4)") == 14);
    REQUIRE(to_string(output_body("(A[i] + 1.0) * 2.0")) == "(A[i] + 1.0) * 2.0");
  }
  SECTION("comparisons do not chain") {
    Error e = parse_error("op t\noutput C[i < 4] = select(0 < i < 3, 1.0, 0.0)\n");
    REQUIRE(e.id() == "syntax-error");
    REQUIRE(e.location().column == 32);
  }
}

TEST_CASE("literals adapt to the other operand and constants fold", "[parser]") {
  SECTION("an integer literal becomes a float of the tensor's type") {
    Expr e = output_body("D[i] * 2");
    REQUIRE(e.type() == ScalarType::F64);
    const FloatImm* two = e.as<Binary>()->b.as<FloatImm>();
    REQUIRE(two);
    REQUIRE(two->type == ScalarType::F64);
    REQUIRE(two->value == 2.0);
  }
  SECTION("a float literal takes f64") {
    Expr e = output_body("D[i] + 0.5");
    REQUIRE(e.as<Binary>()->b.as<FloatImm>()->type == ScalarType::F64);
  }
  SECTION("an integer literal takes i32") {
    Expr e = output_body("I[i] + 1");
    REQUIRE(e.type() == ScalarType::I32);
    REQUIRE(e.as<Binary>()->b.as<IntImm>()->type == ScalarType::I32);
  }
  SECTION("params are literals, and integer arithmetic on constants is folded") {
    ComputeDAG dag = parse_ok("op t\nparam M = 8\ninput A : f32[M]\n"
                              "output C[i < M] = A[M - 1 - i] * (M / 2)\n");
    REQUIRE(to_string(dag.stages().back().body) == "A[7 - i] * 4.0");
  }
  SECTION("f32 literals and casts") {
    REQUIRE(output_body("A[i] * .5").as<Binary>()->b.as<FloatImm>()->value == 0.5);
    REQUIRE(output_body("A[i] * 1e-3").as<Binary>()->b.as<FloatImm>()->value == 1e-3);
    REQUIRE(output_body("f64(A[i])").type() == ScalarType::F64);
    REQUIRE(output_body("i32(A[i])").type() == ScalarType::I32);
    REQUIRE(output_body("f32(i)").type() == ScalarType::F32);
  }
  SECTION("a typed stage casts its body; a typed reduction accumulates in its type") {
    ComputeDAG dag = parse_ok("op t\ninput A : f32[4, 4]\nstage S[i < 4] : f64 = A[i, 0]\n"
                              "output R[i < 4] : f64 = sum(A[i, k] for k < 4)\n");
    REQUIRE(dag.stage(1).dtype == ScalarType::F64);
    REQUIRE(dag.stage(1).body.as<Cast>() != nullptr);
    const Reduce* r = dag.stage(2).reduction();
    REQUIRE(r);
    REQUIRE(r->type == ScalarType::F64);
    REQUIRE(r->body.as<Cast>() != nullptr);
  }
}

TEST_CASE("inf is an f32 infinity and -inf a negative literal", "[parser]") {
  Expr e = output_body("select(i < 2, A[i], -inf)");
  const FloatImm* neg = e.as<Select>()->f.as<FloatImm>();
  REQUIRE(neg);
  REQUIRE(neg->type == ScalarType::F32);
  REQUIRE(std::isinf(neg->value));
  REQUIRE(neg->value < 0);
  Expr pos = output_body("min(A[i], inf)");
  REQUIRE(pos.as<Binary>()->b.as<FloatImm>()->value == std::numeric_limits<double>::infinity());
  REQUIRE(output_body("max(D[i], -inf)").as<Binary>()->b.as<FloatImm>()->type == ScalarType::F64);
}

TEST_CASE("functions and reductions and statements across lines", "[parser]") {
  SECTION("max and min are binary with two arguments, reductions with for") {
    ComputeDAG dag = parse_ok("op t\ninput A : f32[4, 3]\n"
                              "stage B[i < 4] = min(A[i, k] for k < 3)\n"
                              "output C[i < 4] = max(B[i], 0.0)\n");
    REQUIRE(dag.stage(1).reduction()->op == ReduceOp::Min);
    REQUIRE(dag.stage(2).body.as<Binary>()->op == BinaryOp::Max);
  }
  SECTION("if is select") {
    REQUIRE(equal(output_body("if(i < 2, A[i], 0.0)"), output_body("select(i < 2, A[i], 0.0)")));
  }
  SECTION("math functions") {
    REQUIRE(output_body("exp(A[i]) + log(A[i]) + sqrt(A[i]) + abs(A[i])").type() ==
            ScalarType::F32);
    ir::Expr e = output_body("erf(A[i]) * tanh(A[i])");
    REQUIRE(e.as<Binary>()->a.as<Call>()->fn == Intrinsic::Erf);
    REQUIRE(e.as<Binary>()->b.as<Call>()->fn == Intrinsic::Tanh);
  }
  SECTION("a reduction over several axes, wrapped over lines, with comments") {
    ComputeDAG dag = parse_ok("op t # the op\n\n# a comment line\ninput A : f32[4, 3, 2]\n"
                              "output C[i < 4] = sum(A[i, j, k] # first\n"
                              "                      for j < 3,\n"
                              "                          k < 2)  \n");
    REQUIRE(dag.stage(1).reduction()->axes == std::vector<IterVar>{{"j", 3}, {"k", 2}});
  }
  SECTION("several outputs") {
    ComputeDAG dag = parse_ok("op t\ninput A : f32[4]\noutput B[i < 4] = A[i]\n"
                              "output C[i < 4] = B[i] * 2.0\n");
    REQUIRE(dag.arguments() == std::vector<int>{0, 1, 2});
  }
  SECTION("CRLF line endings") {
    ComputeDAG dag = parse_ok("op t\r\ninput A : f32[4]\r\noutput B[i < 4] = A[i]\r\n");
    REQUIRE(dag.stages().size() == 2);
  }
}

TEST_CASE("errors carry an id and a location", "[parser]") {
  Error e = parse_error("op t\ninput A : f32[4]\noutput C[i < 4] = B[i]\n");
  REQUIRE(e.id() == "unknown-tensor");
  REQUIRE(e.location().file == "test.kop");
  REQUIRE(e.location().line == 3);
  REQUIRE(e.location().column == 19);
  REQUIRE(e.location().line_text == "output C[i < 4] = B[i]");
  REQUIRE(e.render().rfind("test.kop:3:19: error: unknown tensor 'B'", 0) == 0);

  REQUIRE(parse_error("").id() == "missing-op");
  REQUIRE(parse_error("op t\ninput A : f32[4]\n").id() == "no-output");
  REQUIRE(parse_error("op t\noutput C[i < 4] = 1.0 +\n  2.0\n").id() == "syntax-error");
  REQUIRE(parse_error("op t\noutput C[i < 4] = (1.0\n").id() == "unterminated-bracket");
  REQUIRE(parse_op_file("/nonexistent/x.kop").error().id() == "cannot-open-file");
}

TEST_CASE("a constant input is parsed, printed, keyed, and what is computed from it alone is "
          "constant",
          "[parser][constant]") {
  const char* text = "op dense\nparam N = 4\ninput x : f32[N]\nconst input w : f32[N, N]\n"
                     "stage wt[j < N, i < N] = w[i, j]\nstage xs[i < N] = x[i] * 2.0\n"
                     "output y[j < N] = sum(wt[j, i] * xs[i] for i < N)\n";
  ComputeDAG dag = parse_ok(text);
  REQUIRE_FALSE(dag.stage(dag.find_stage("x")).is_constant);
  REQUIRE(dag.stage(dag.find_stage("w")).is_constant);
  CHECK(dag.is_constant(dag.find_stage("w")));
  CHECK(dag.is_constant(dag.find_stage("wt")));
  CHECK_FALSE(dag.is_constant(dag.find_stage("xs")));
  CHECK_FALSE(dag.is_constant(dag.find_stage("y")));
  REQUIRE_THAT(dag.to_string(), Catch::Contains("const input w : f32[4, 4]\n"));
  ComputeDAG again = parse_ok(dag.to_string());
  REQUIRE(again.workload_key() == dag.workload_key());

  // The same op with a plain input is another workload: its kernel packs
  // nothing ahead.
  std::string plain = text;
  plain.replace(plain.find("const input"), 11, "input");
  REQUIRE(parse_ok(plain).workload_key() != dag.workload_key());

  // The C++ builder says the same.
  DAGBuilder b("dense");
  b.param("N", 4);
  auto x = b.input("x", {4});
  auto w = b.constant_input("w", {4, 4});
  auto wt = b.compute("wt", {{"j", 4}, {"i", 4}},
                      [&](const std::vector<Expr>& v) { return w(v[1], v[0]); });
  auto xs = b.compute("xs", {{"i", 4}}, [&](const std::vector<Expr>& v) { return x(v[0]) * 2.0; });
  IterVar i{"i", 4};
  auto y = b.compute("y", {{"j", 4}}, [&](const std::vector<Expr>& v) {
    return sum(wt(v[0], var(i)) * xs(var(i)), {i});
  });
  b.output(y);
  REQUIRE(std::move(b).build().workload_key() == dag.workload_key());

  Error e = parse_error("op t\nconst stage A[i < 4] = 1.0\n");
  CHECK(e.id() == "syntax-error");
  CHECK_THAT(e.message(), Catch::Contains("expected 'input' after 'const'"));
}
