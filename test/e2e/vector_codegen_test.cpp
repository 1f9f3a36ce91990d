// Vector code for the schedules tuned kernels use most: a fused parallel
// outer loop, a split tail inside
// a vector loop, a vector loop whose width is not a power of two. Each
// kernel is checked against the interpreter at odd extents, and its LLVM IR
// is checked for what made it slow: gathers, or no vector arithmetic at all.
#include "kernel_check.h"
#include "small_shapes.h"

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/schedule/transform_step.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace kiln;
using namespace kiln::schedule;

namespace {

ir::ComputeDAG parse(const std::string& op, const ir::ParamOverrides& shape) {
  auto dag = ir::parse_op_file(test::op_file(op).string(), shape);
  if (!dag)
    throw std::runtime_error(dag.error().render());
  return std::move(*dag);
}

/// Checks the kernel against the interpreter and returns its IR (optimised
/// unless `stage` says otherwise).
std::string check_and_dump(const std::string& op, const ir::ParamOverrides& shape,
                           const std::vector<Step>& steps,
                           codegen::DumpStage stage = codegen::DumpStage::Optimized) {
  ir::ComputeDAG dag = parse(op, shape);
  auto state = State::replay(dag, steps);
  INFO(op << " " << test::set_flags(shape) << "\nsteps: " << steps_to_json(steps));
  REQUIRE(state.ok());
  test::KernelOutcome outcome = test::KernelChecker::shared().check(dag, *state);
  INFO(test::reproduce_hint(op, shape, *state));
  INFO(outcome.failure);
  REQUIRE(outcome.ok());
  REQUIRE(outcome.check.passed);
  static auto compiler = codegen::Compiler::create(codegen::host_target());
  REQUIRE(compiler.ok());
  auto ir = (*compiler)->dump(lower(*state), stage);
  REQUIRE(ir.ok());
  return *ir;
}

/// Whether the IR has floating-point vector arithmetic of at least 4 lanes
/// (a line with an fadd, fmul or fma on a `<N x float>`, N >= 4).
bool has_vector_math(const std::string& ir) {
  std::istringstream lines(ir);
  std::string line;
  while (std::getline(lines, line)) {
    bool math = line.find("fmul") != std::string::npos || line.find("fadd") != std::string::npos ||
                line.find("llvm.fma") != std::string::npos;
    if (!math)
      continue;
    for (const char* type : {"<4 x float>", "<8 x float>", "<16 x float>", "<32 x float>"})
      if (line.find(type) != std::string::npos)
        return true;
  }
  return false;
}

bool has_gather(const std::string& ir) {
  return ir.find("llvm.masked.gather") != std::string::npos;
}

/// matmul with the Ansor sketch shape: a register tile computed at a fused,
/// parallel pair of block loops, B packed per tile.
std::vector<Step> fused_parallel_matmul() {
  return {
      CacheWriteStep{"C"},
      SplitStep{"C", "i", {8}},
      SplitStep{"C", "j", {16}},
      ReorderStep{"C", {"i.0", "j.0", "i.1", "j.1"}},
      FuseStep{"C", {"i.0", "j.0"}},
      AnnotateStep{"C", "i.0@j.0", Annotation::Parallel},
      AnnotateStep{"C", "j.1", Annotation::Vectorize},
      SplitStep{"C.local", "k", {4}},
      ReorderStep{"C.local", {"k.0", "k.1", "i", "j"}},
      ComputeAtStep{"C.local", "C", "i.0@j.0"},
      AnnotateStep{"C.local", "j", Annotation::Vectorize},
      CacheReadStep{"B", "C.local"},
      ComputeAtStep{"B.cache", "C.local", "k.0"},
      AnnotateStep{"B.cache", "ax1", Annotation::Vectorize},
  };
}

/// matmul C's j split by `factor`, the inner part vectorised.
std::vector<Step> vector_tail_matmul(std::int64_t factor) {
  return {
      SplitStep{"C", "j", {factor}},
      ReorderStep{"C", {"i", "j.0", "k", "j.1"}},
      AnnotateStep{"C", "j.1", Annotation::Vectorize},
  };
}

} // namespace

TEST_CASE("a fused parallel loop keeps contiguous vector loads", "[e2e][codegen][vector]") {
  // 64 × 48: blocks of 8 × 16, 8 × 3 of them fused (div and mod by 3).
  std::string ir =
      check_and_dump("matmul", {{"M", "64"}, {"N", "48"}, {"K", "32"}}, fused_parallel_matmul());
  CHECK_FALSE(has_gather(ir));
  CHECK(has_vector_math(ir));
}

TEST_CASE("a split tail inside a vector loop is vector code", "[e2e][codegen][vector]") {
  SECTION("matmul N = 56 split by 16") {
    std::string ir =
        check_and_dump("matmul", {{"M", "5"}, {"N", "56"}, {"K", "7"}}, vector_tail_matmul(16));
    CHECK(has_vector_math(ir));
    CHECK_FALSE(has_gather(ir));
  }
  SECTION("matmul N = 13 split by 8") {
    std::string ir =
        check_and_dump("matmul", {{"M", "3"}, {"N", "13"}, {"K", "5"}}, vector_tail_matmul(8));
    CHECK(has_vector_math(ir));
  }
  SECTION("the guard on an outer tile loop, the tail of the tail") {
    // Tiles of 3 × 16 over 7 × 37: both splits have tails, j.1 is a vector.
    check_and_dump("matmul", {{"M", "7"}, {"N", "37"}, {"K", "4"}},
                   {SplitStep{"C", "i", {3}}, SplitStep{"C", "j", {16}},
                    ReorderStep{"C", {"i.0", "j.0", "k", "i.1", "j.1"}},
                    AnnotateStep{"C", "i.1", Annotation::Unroll},
                    AnnotateStep{"C", "j.1", Annotation::Vectorize}});
  }
  SECTION("conv2d 56-wide rows, x split by 16") {
    std::string ir =
        check_and_dump("conv2d_nchw", {{"C", "3"}, {"K", "4"}, {"H", "6"}, {"W", "56"}},
                       {SplitStep{"conv", "x", {16}},
                        ReorderStep{"conv", {"n", "k", "y", "x.0", "rc", "ry", "rx", "x.1"}},
                        AnnotateStep{"conv", "x.1", Annotation::Vectorize}});
    CHECK(has_vector_math(ir));
  }
}

TEST_CASE("a vector loop of a width that is not a power of two", "[e2e][codegen][vector]") {
  for (std::int64_t n : {56, 13, 7, 3}) {
    DYNAMIC_SECTION("matmul N = " << n << " vectorised whole") {
      std::string ir = check_and_dump(
          "matmul", {{"M", "3"}, {"N", std::to_string(n)}, {"K", "5"}},
          {ReorderStep{"C", {"i", "k", "j"}}, AnnotateStep{"C", "j", Annotation::Vectorize}});
      if (n >= 4)
        CHECK(has_vector_math(ir));
      // No vector type wider than the chunks: 56 = 32 + 16 + 8.
      CHECK(ir.find("<56 x float>") == std::string::npos);
      CHECK(ir.find("<13 x float>") == std::string::npos);
    }
  }
  SECTION("conv2d 56-wide rows vectorised whole") {
    std::string ir =
        check_and_dump("conv2d_nchw", {{"C", "3"}, {"K", "4"}, {"H", "5"}, {"W", "56"}},
                       {ReorderStep{"conv", {"n", "k", "y", "rc", "ry", "rx", "x"}},
                        AnnotateStep{"conv", "x", Annotation::Vectorize}});
    CHECK(has_vector_math(ir));
    CHECK(ir.find("<56 x float>") == std::string::npos);
  }
}

TEST_CASE("a conv vectorized over output channels loads weights and tile as whole vectors",
          "[e2e][codegen][vector]") {
  // The weight-vectorized sketch's structure (the MultiLevelTilingWeightVectorized rule,
  // lib/space/sketch_rules.h): the kernel copied at the root, a register tile of 7 columns x 16
  // channels with k innermost. Lowering stores k last in the copy and the tile
  // (schedule/vector_layout.cpp), so kiln emits no gather or scatter for
  // the kernel's vector loops (before, every access in the register tile
  // was one). The IR is read before LLVM's own passes: its loop vectorizer
  // may still use gathers for the serial copy loops.
  std::vector<Step> steps = {CacheWriteStep{"conv"},
                             CacheReadStep{"kernel", "conv.local"},
                             SplitStep{"conv", "k", {16}},
                             SplitStep{"conv", "x", {7}},
                             ReorderStep{"conv", {"n", "k.0", "y", "x.0", "k.1", "x.1"}},
                             ComputeAtStep{"conv.local", "conv", "x.0"},
                             ReorderStep{"conv.local", {"n", "y", "rc", "ry", "rx", "x", "k"}},
                             AnnotateStep{"conv.local", "x", Annotation::Unroll},
                             AnnotateStep{"conv.local", "k", Annotation::Vectorize}};
  std::string ir = check_and_dump("conv2d_nchw", {{"C", "3"}, {"K", "32"}, {"H", "5"}, {"W", "14"}},
                                  steps, codegen::DumpStage::LLVM);
  CHECK(has_vector_math(ir));
  CHECK_FALSE(has_gather(ir));
  CHECK(ir.find("llvm.masked.scatter") == std::string::npos);
}

TEST_CASE("a strided vector load is whole vectors and a shuffle, not a gather",
          "[e2e][codegen][vector]") {
  // x vectorized in a conv of stride 2 to 4 reads the input row every
  // stride-th element. Kernels against the interpreter at odd widths (the
  // last vector of a row ends at the row's last element read, the next row
  // is not touched past it) and the IR before LLVM's passes for gathers.
  for (std::int64_t stride : {2, 3, 4}) {
    DYNAMIC_SECTION("conv2d without padding, stride " << stride) {
      std::string ir = check_and_dump("conv2d_nchw",
                                      {{"C", "2"},
                                       {"K", "3"},
                                       {"H", "7"},
                                       {"W", "37"},
                                       {"pad", "0"},
                                       {"stride", std::to_string(stride)}},
                                      {ReorderStep{"conv", {"n", "k", "y", "rc", "ry", "rx", "x"}},
                                       AnnotateStep{"conv", "x", Annotation::Vectorize}},
                                      codegen::DumpStage::LLVM);
      CHECK(has_vector_math(ir));
      CHECK_FALSE(has_gather(ir));
    }
  }
  for (std::int64_t stride : {2, 3}) {
    // The padding inlined: a select whose lanes differ at the row's ends,
    // so the loads run under a mask.
    DYNAMIC_SECTION("depthwise conv2d with padding inlined, stride " << stride) {
      std::string ir =
          check_and_dump("depthwise_conv2d",
                         {{"C", "3"}, {"H", "9"}, {"W", "29"}, {"stride", std::to_string(stride)}},
                         {ComputeInlineStep{"padded"}, SplitStep{"dwconv", "x", {8}},
                          ReorderStep{"dwconv", {"n", "c", "y", "x.0", "ry", "rx", "x.1"}},
                          AnnotateStep{"dwconv", "x.1", Annotation::Vectorize}},
                         codegen::DumpStage::LLVM);
      CHECK(has_vector_math(ir));
      CHECK_FALSE(has_gather(ir));
    }
  }
}

TEST_CASE("inlined padding costs no mask in the middle of a row and no branch at a padded row",
          "[e2e][codegen][vector]") {
  // A depthwise conv with its padding inlined, rows in a parallel loop, x
  // vectorized by 8 over odd widths: the loop over the row's vectors splits
  // where the padding's columns end (codegen/partition.cpp), so the vectors
  // in the middle of a row load whole vectors; what is left of the
  // condition there (the row's padding, the same in every lane, and not
  // split off: parallel loops are not) reads a block of zeros instead of
  // branching. The kernels against the interpreter, the IR before LLVM's
  // passes.
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  for (std::int64_t stride : {1, 2}) {
    DYNAMIC_SECTION("stride " << stride) {
      std::string ir =
          check_and_dump("depthwise_conv2d",
                         {{"C", "3"},
                          {"H", "9"},
                          {"W", std::to_string(29 * stride)},
                          {"stride", std::to_string(stride)}},
                         {ComputeInlineStep{"padded"}, SplitStep{"dwconv", "x", {8}},
                          ReorderStep{"dwconv", {"n", "c", "y", "ry", "rx", "x.0", "x.1"}},
                          FuseStep{"dwconv", {"n", "c", "y"}},
                          AnnotateStep{"dwconv", "n@c@y", Annotation::Parallel},
                          AnnotateStep{"dwconv", "x.1", Annotation::Vectorize}},
                         codegen::DumpStage::LLVM);
      CHECK(has_vector_math(ir));
      CHECK_FALSE(has_gather(ir));
      CHECK(count(ir, "= load <8 x float>") >= 1);
      CHECK(count(ir, "@kiln.zeros") >= 2);
    }
  }
}
