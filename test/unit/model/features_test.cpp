#include "model_test_util.h"

#include "kiln/model/features.h"
#include "kiln/schedule/lower.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace kiln;
using test::column;

TEST_CASE("every column has a unique name", "[model][features]") {
  const auto& names = model::feature_names();
  REQUIRE(static_cast<int>(names.size()) == model::feature_count());
  REQUIRE(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  // The names docs/features.md and the header promise.
  REQUIRE(names.front() == "float_mad");
  REQUIRE(column(std::vector<float>(names.size(), 0.0f), "vec_len_inner") == 0);
  REQUIRE(column(std::vector<float>(names.size(), 0.0f), "b4_stride") == 0);
  REQUIRE(column(std::vector<float>(names.size(), 0.0f), "arith_intensity_9") == 0);
}

TEST_CASE("the columns keep their names and order", "[model][features]") {
  // A trained model reads its columns by position: the shipped one
  // (data/kiln-default.model) and every saved one assume this layout, which
  // only a new kFeatureVersion may change.
  std::vector<std::string> expected = {"float_mad",  "float_addsub", "float_mul",   "float_divmod",
                                       "float_cmp",  "float_math",   "float_other", "int_mad",
                                       "int_addsub", "int_mul",      "int_divmod",  "int_cmp",
                                       "int_other",  "bool_op",      "select"};
  for (const char* prefix : {"vec", "unroll", "par"})
    for (const char* suffix :
         {"num", "prod", "len_inner", "pos_inner", "pos_middle", "pos_outer", "pos_none"})
      expected.push_back(std::string(prefix) + "_" + suffix);
  for (int b = 0; b < 5; ++b)
    for (const char* suffix :
         {"is_read", "is_write", "is_read_write", "bytes", "unique_bytes", "lines", "unique_lines",
          "reuse_loop", "reuse_serial", "reuse_none", "reuse_dis_iter", "reuse_dis_bytes",
          "reuse_ct", "bytes_d_reuse_ct", "unique_bytes_d_reuse_ct", "lines_d_reuse_ct",
          "unique_lines_d_reuse_ct", "stride"})
      expected.push_back("b" + std::to_string(b) + "_" + suffix);
  for (int i = 0; i < 10; ++i)
    expected.push_back("arith_intensity_" + std::to_string(i));
  for (const char* name :
       {"alloc_local_bytes", "alloc_heap_bytes", "alloc_count", "alloc_outer_prod", "store_arg",
        "store_heap", "store_local", "outer_loop_count", "outer_loop_prod", "unroll_stmts",
        "reg_block", "reg_accumulators", "reg_loads", "reg_flops_per_load", "reg_serial_extent"})
    expected.push_back(name);
  for (const char* name : {"hw_vector_bits", "hw_fma_flops", "hw_cores", "hw_l1d_kib", "hw_l2_kib",
                           "hw_l3_kib", "hw_vec_registers"})
    expected.push_back(name);
  REQUIRE(model::kFeatureVersion == 3);
  REQUIRE(expected.size() == 158);
  REQUIRE(model::feature_names() == expected);
  REQUIRE(model::feature_count() == 158);
}

/// The matmul's update row (the one with multiply-adds), or its first other row.
static const std::vector<float>* find_row(const model::ProgramFeatures& f, bool update) {
  for (const auto& row : f.rows)
    if ((column(row, "float_mad") > 0) == update)
      return &row;
  return nullptr;
}

/// The register-tiled schedule of the space tests: a 4x16 tile in C.local,
/// k split by 4, tile rows and inner k unrolled, 16-lane vectors.
static schedule::State tiled_matmul(const ir::ComputeDAG& dag) {
  schedule::State s(dag);
  s.cache_write("C");
  s.split("C", "i", {4});
  s.split("C", "j", {16});
  s.reorder("C", {"i.0", "j.0", "i.1", "j.1"});
  s.compute_at("C.local", "C", "j.0");
  s.split("C.local", "k", {4});
  s.reorder("C.local", {"k.0", "k.1", "i", "j"});
  s.unroll("C.local", "k.1");
  s.unroll("C.local", "i");
  s.vectorize("C.local", "j");
  s.vectorize("C", "j.1");
  s.parallel("C", "i.0");
  return s;
}

TEST_CASE("naive and tiled matmul differ in vectors and unrolling and reuse", "[model][features]") {
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  model::ProgramFeatures naive =
      model::extract_features(schedule::lower_naive(dag), test::test_hardware());
  model::ProgramFeatures tiled =
      model::extract_features(test::lower_for_features(tiled_matmul(dag)), test::test_hardware());

  // Naive: the init and the update. Tiled: init, update, write-back.
  REQUIRE(naive.rows.size() == 2);
  REQUIRE(tiled.rows.size() == 3);
  for (const auto& row : naive.rows)
    REQUIRE(static_cast<int>(row.size()) == model::feature_count());
  const auto& n = *find_row(naive, true);
  const auto& t = *find_row(tiled, true);

  // Same work: 64^3 multiply-adds either way.
  REQUIRE(column(n, "float_mad") == Approx(64.0 * 64 * 64).epsilon(1e-3));
  REQUIRE(column(t, "float_mad") == Approx(64.0 * 64 * 64).epsilon(1e-3));
  REQUIRE(column(n, "outer_loop_prod") == Approx(64.0 * 64 * 64).epsilon(1e-3));

  // Vectors.
  REQUIRE(column(n, "vec_num") == 0);
  REQUIRE(column(n, "vec_pos_none") == 1);
  REQUIRE(column(t, "vec_len_inner") == Approx(16).epsilon(1e-4));
  REQUIRE(column(t, "vec_pos_inner") == 1);

  // Unrolling: 4 k steps x 4 rows, between the k.0 loop and the vector loop.
  REQUIRE(column(n, "unroll_num") == 0);
  REQUIRE(column(t, "unroll_num") == Approx(2).epsilon(1e-4));
  REQUIRE(column(t, "unroll_stmts") == Approx(16).epsilon(1e-4));
  REQUIRE(column(t, "unroll_prod") == Approx(16).epsilon(1e-4));
  REQUIRE(column(t, "unroll_len_inner") == Approx(4).epsilon(1e-4));
  REQUIRE(column(t, "unroll_pos_middle") == 1);

  // Parallel outer loop.
  REQUIRE(column(n, "par_num") == 0);
  REQUIRE(column(t, "par_len_inner") == Approx(16).epsilon(1e-4));
  REQUIRE(column(t, "par_pos_outer") == 1);

  // Naive update: B[k, j] walks a column (stride 64, a new line every
  // access) and is the top buffer by lines; C is reused across k, the
  // innermost loop.
  REQUIRE(column(n, "b0_stride") == Approx(64).epsilon(1e-4));
  REQUIRE(column(n, "b0_lines") == Approx(64.0 * 64 * 64).epsilon(1e-3));
  REQUIRE(column(n, "b0_reuse_loop") == 1);
  REQUIRE(column(n, "b0_reuse_dis_iter") == Approx(64 * 64).epsilon(1e-3)); // reused across i
  REQUIRE(column(n, "b2_is_read_write") == 1);                              // C
  REQUIRE(column(n, "b2_reuse_dis_iter") == Approx(1).epsilon(1e-4));

  // Tiled update: every buffer moves with stride 1 in the vector loop but
  // A, broadcast, which is reused 16 times in it; far fewer lines.
  double tiled_lines = 0, naive_lines = 0;
  bool broadcast = false;
  for (int b = 0; b < 3; ++b) {
    const std::string p = "b" + std::to_string(b) + "_";
    tiled_lines += column(t, p + "lines");
    naive_lines += column(n, p + "lines");
    if (column(t, p + "stride") == 0) {
      broadcast = true;
      REQUIRE(column(t, p + "reuse_loop") == 1);
      REQUIRE(column(t, p + "reuse_ct") == Approx(16).epsilon(1e-4));
      REQUIRE(column(t, p + "reuse_dis_iter") == Approx(1).epsilon(1e-4));
    }
  }
  REQUIRE(broadcast);
  REQUIRE(tiled_lines < naive_lines / 4);
  // The accumulator tile lives in a local buffer.
  REQUIRE(column(t, "alloc_local_bytes") == Approx(4 * 16 * 4).epsilon(1e-4));
  REQUIRE(column(t, "store_local") == 1);
  REQUIRE(column(n, "store_arg") == 1);
  // More reuse per byte: higher arithmetic intensity at the outermost level.
  REQUIRE(column(t, "arith_intensity_9") >= column(n, "arith_intensity_9"));
  REQUIRE(column(t, "arith_intensity_5") > column(n, "arith_intensity_5"));

  // Deterministic.
  REQUIRE(
      model::extract_features(test::lower_for_features(tiled_matmul(dag)), test::test_hardware())
          .rows == tiled.rows);
}

TEST_CASE("expanded unrolled copies give the rows of the unrolled loops", "[model][features]") {
  // Codegen's lowering expands unrolled loops into copies; the features merge
  // the copies of a statement into one row with a virtual unrolled loop, so
  // that both trees describe the same program.
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  auto loops =
      model::extract_features(test::lower_for_features(tiled_matmul(dag)), test::test_hardware());
  auto copies = model::extract_features(schedule::lower(tiled_matmul(dag)), test::test_hardware());
  REQUIRE(loops.rows.size() == 3);
  REQUIRE(copies.rows.size() == 3);
  for (const char* name : {"float_mad", "vec_len_inner", "vec_pos_inner", "unroll_prod",
                           "unroll_stmts", "unroll_pos_middle", "par_len_inner", "outer_loop_prod",
                           "alloc_local_bytes", "store_local", "store_arg", "arith_intensity_9"})
    for (size_t r = 0; r < 3; ++r) {
      INFO(name << " row " << r);
      REQUIRE(column(copies.rows[r], name) == Approx(column(loops.rows[r], name)).epsilon(1e-4));
    }
  // The same buffers with the same traffic, whatever their order.
  for (size_t r = 0; r < 3; ++r) {
    std::multiset<long> a, b;
    for (int i = 0; i < 5; ++i) {
      const std::string p = "b" + std::to_string(i) + "_";
      a.insert(std::lround(column(loops.rows[r], p + "bytes") * 1e3 +
                           column(loops.rows[r], p + "unique_bytes")));
      b.insert(std::lround(column(copies.rows[r], p + "bytes") * 1e3 +
                           column(copies.rows[r], p + "unique_bytes")));
    }
    REQUIRE(a == b);
  }
}

TEST_CASE("buffer columns follow their formulas on a transpose", "[model][features]") {
  // B[i, j] = A[j, i]: the store walks rows, the load walks columns.
  using namespace schedule;
  auto i = ir::Var::make("i"), j = ir::Var::make("j");
  Buffer A{"A", ir::ScalarType::F32, {64, 64}, BufferScope::Argument};
  Buffer B{"B", ir::ScalarType::F32, {64, 64}, BufferScope::Argument};
  Stmt store = Store::make("B", {i, j}, ir::Load::make("A", {j, i}, ir::ScalarType::F32));
  LoweredFunc f{"transpose",
                {A, B},
                For::make("i", 64, ForKind::Serial, For::make("j", 64, ForKind::Serial, store))};
  auto feats = model::extract_features(f, test::test_hardware());
  REQUIRE(feats.rows.size() == 1);
  const auto& r = feats.rows[0];
  // A is first: a new line at every access (stride 64 floats = 256 bytes).
  REQUIRE(column(r, "b0_is_read") == 1);
  REQUIRE(column(r, "b0_stride") == Approx(64).epsilon(1e-4));
  REQUIRE(column(r, "b0_lines") == Approx(4096).epsilon(1e-4));
  REQUIRE(column(r, "b0_unique_bytes") == Approx(16384).epsilon(1e-4));
  REQUIRE(column(r, "b0_unique_lines") == Approx(256).epsilon(1e-4));
  REQUIRE(column(r, "b0_reuse_none") == 1);
  // B: 16 floats per line.
  REQUIRE(column(r, "b1_is_write") == 1);
  REQUIRE(column(r, "b1_stride") == Approx(1).epsilon(1e-4));
  REQUIRE(column(r, "b1_lines") == Approx(256).epsilon(1e-4));
  REQUIRE(column(r, "b1_bytes") == Approx(16384).epsilon(1e-4));
  REQUIRE(column(r, "b2_bytes") == 0); // padding
  // No arithmetic: no intensity curve.
  REQUIRE(column(r, "arith_intensity_9") == 0);
  REQUIRE(column(r, "outer_loop_count") == Approx(2).epsilon(1e-4));
}

TEST_CASE("an empty loop nest has no rows", "[model][features]") {
  schedule::LoweredFunc f{"empty", {}, schedule::Block::make({})};
  REQUIRE(model::extract_features(f, test::test_hardware()).rows.empty());
}

TEST_CASE("the register block counts a tile's accumulators and loads", "[model][features]") {
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  model::ProgramFeatures tiled =
      model::extract_features(test::lower_for_features(tiled_matmul(dag)), test::test_hardware());
  model::ProgramFeatures naive =
      model::extract_features(schedule::lower_naive(dag), test::test_hardware());
  const auto& t = *find_row(tiled, true);
  const auto& n = *find_row(naive, true);
  // k.1 (4) x i (4) unrolled x j (16 lanes): 256 instances keeping a 4x16
  // tile of C.local, loading 4x4 of A and 4x16 of B, over k.0 (16).
  REQUIRE(column(t, "reg_block") == Approx(256).epsilon(1e-4));
  REQUIRE(column(t, "reg_accumulators") == Approx(64).epsilon(1e-4));
  REQUIRE(column(t, "reg_loads") == Approx(16 + 64).epsilon(1e-4));
  REQUIRE(column(t, "reg_flops_per_load") == Approx(2.0 * 256 / 80).epsilon(1e-4));
  REQUIRE(column(t, "reg_serial_extent") == Approx(16).epsilon(1e-4));
  // Naive: no block; one multiply-add per two loads, in the k loop of 64.
  REQUIRE(column(n, "reg_block") == Approx(1).epsilon(1e-4));
  REQUIRE(column(n, "reg_accumulators") == Approx(1).epsilon(1e-4));
  REQUIRE(column(n, "reg_loads") == Approx(2).epsilon(1e-4));
  REQUIRE(column(n, "reg_serial_extent") == Approx(64).epsilon(1e-4));
}

TEST_CASE("every row ends with the machine's columns", "[model][features]") {
  const ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  const Target zen3{"x86_64-pc-linux-gnu", "znver3", "", 256, 2};
  const Target zen4{"x86_64-pc-linux-gnu", "znver4", "", 512, 2};
  const model::Hardware h3 = model::hardware_of(zen3), h4 = model::hardware_of(zen4);
  CHECK(h3.vector_bits == 256);
  CHECK(h3.fma_flops == 32); // two 256-bit pipes
  CHECK(h4.fma_flops == 32); // 512-bit FMAs as two halves
  CHECK(h3.l2_kib == 512);
  CHECK(h4.l2_kib == 1024);
  // An unknown CPU: two pipes of its vector width, its own caches.
  Target odd{"x86_64-pc-linux-gnu", "mystery", "", 512, 4};
  odd.l2_bytes = 2 << 20;
  CHECK(model::hardware_of(odd).fma_flops == 64);
  CHECK(model::hardware_of(odd).l2_kib == 2048);

  const schedule::LoweredFunc func = test::lower_for_features(tiled_matmul(dag));
  const model::ProgramFeatures on3 = model::extract_features(func, h3);
  const model::ProgramFeatures on4 = model::extract_features(func, h4);
  REQUIRE(on3.rows.size() == on4.rows.size());
  const std::vector<float>* update3 = find_row(on3, true);
  const std::vector<float>* update4 = find_row(on4, true);
  REQUIRE(update3 != nullptr);
  REQUIRE(update4 != nullptr);
  // Everything but the machine's columns is the program's.
  for (const std::string& name : model::feature_names())
    if (name.rfind("hw_", 0) != 0)
      CHECK(column(*update3, name) == column(*update4, name));
  CHECK(column(*update3, "hw_vector_bits") == Approx(256));
  CHECK(column(*update4, "hw_vector_bits") == Approx(512));
  // The 16-lane vector loop fills two 8-lane registers, one 16-lane one.
  CHECK(column(*update3, "hw_vec_registers") == Approx(2));
  CHECK(column(*update4, "hw_vec_registers") == Approx(1));
}
