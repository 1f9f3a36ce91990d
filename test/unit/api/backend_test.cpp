// The backend API: apply history best, compile and call, tune.
#include "c_handles.h"

#include "kiln/api/backend.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/schedule/transform_step.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>

using namespace kiln;

namespace {

ir::ComputeDAG matmul(std::int64_t m, std::int64_t n, std::int64_t k) {
  ir::DAGBuilder b("matmul");
  auto A = b.input("A", {m, k});
  auto B = b.input("B", {k, n});
  ir::IterVar kv{"k", k};
  auto C = b.compute("C", {{"i", m}, {"j", n}}, [&](const std::vector<ir::Expr>& v) {
    return ir::sum(A(v[0], ir::var(kv)) * B(ir::var(kv), v[1]), {kv});
  });
  b.output(C);
  return std::move(b).build();
}

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, AlignedFree>;

Buffer buffer(std::int64_t n) {
  return Buffer(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64)));
}

/// Runs `kernel` on seeded inputs and returns the largest difference from
/// the interpreter.
double max_error(api::Kernel& kernel) {
  const ir::ComputeDAG& dag = kernel.dag();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<Buffer> buffers;
  std::vector<void*> args;
  std::map<std::string, std::vector<double>> inputs;
  for (int s : dag.arguments()) {
    const ir::Stage& stage = dag.stage(s);
    buffers.push_back(buffer(stage.num_elements()));
    if (stage.is_placeholder()) {
      std::vector<double>& values = inputs[stage.name];
      for (std::int64_t i = 0; i < stage.num_elements(); ++i) {
        buffers.back().get()[i] = dist(rng);
        values.push_back(buffers.back().get()[i]);
      }
    }
    args.push_back(buffers.back().get());
  }
  kernel.prepack(args.data());
  REQUIRE_FALSE(kernel.run(args.data()));
  ir::Interpreter interpreter(dag, inputs);
  const int out = dag.arguments().back();
  std::vector<double> expected = interpreter.evaluate(out);
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::abs(expected[i] - buffers.back().get()[i]));
  return worst;
}

} // namespace

TEST_CASE("A backend compiles an op without records to its naive kernel, which is right") {
  auto backend = api::Backend::create();
  REQUIRE(backend.ok());
  ir::ComputeDAG dag = matmul(13, 17, 19);
  api::BestRecord best = (*backend)->best(dag);
  CHECK_FALSE(best.record);
  CHECK_THAT(best.description, Catch::Contains("naive"));
  auto kernel = (*backend)->compile(dag);
  REQUIRE(kernel.ok());
  CHECK_THAT((*kernel)->source(), Catch::Contains("naive"));
  CHECK(max_error(**kernel) < 1e-4);
}

TEST_CASE("A backend tunes an op, then applies the history best of its log to compile it") {
  const std::string log = (std::filesystem::temp_directory_path() / "kiln-api-backend.jsonl");
  std::filesystem::remove(log);
  ir::ComputeDAG dag = matmul(32, 48, 40);
  {
    auto backend = api::Backend::create();
    REQUIRE(backend.ok());
    search::SessionOptions options = (*backend)->tune_options(log);
    options.tune.trials = 8;
    options.tune.batch = 4;
    auto result = (*backend)->tune(dag, options);
    REQUIRE(result.ok());
    REQUIRE(result->tune.best);
  }
  // A new backend, as a compiler run later would make, reads the log.
  auto backend = api::Backend::create();
  REQUIRE(backend.ok());
  REQUIRE_FALSE((*backend)->load_logs({log}));
  api::BestRecord best = (*backend)->best(dag);
  REQUIRE(best.record);
  CHECK(best.match == record::TargetMatch::Exact);
  CHECK_THAT(best.description, Catch::Contains("exact CPU"));
  auto kernel = (*backend)->compile(dag);
  REQUIRE(kernel.ok());
  CHECK((*kernel)->source() == best.description);
  CHECK(max_error(**kernel) < 1e-4);
  // Another shape of the op, with no record of its own: the tuned shape's
  // best configs refitted to it, checked and timed here.
  ir::ComputeDAG other = matmul(29, 50, 37);
  api::BestRecord nearest = (*backend)->best(other);
  REQUIRE(nearest.record);
  CHECK(nearest.nearest_shape);
  CHECK(nearest.record->task.workload_key == other.workload_key());
  CHECK(nearest.record->result.ok());
  CHECK_THAT(nearest.description, Catch::Contains("nearest shape: trial"));
  CHECK_THAT(nearest.description, Catch::Contains(dag.workload_key()));
  auto refitted = (*backend)->compile(other);
  REQUIRE(refitted.ok());
  CHECK((*refitted)->source() == nearest.description);
  CHECK(max_error(**refitted) < 1e-4);
  (*backend)->set_nearest_shape(false);
  CHECK_FALSE((*backend)->best(matmul(32, 48, 41)).record);
  std::filesystem::remove(log);
}

TEST_CASE("A backend for another CPU looks up records but compiles no in-process kernel") {
  auto target = codegen::named_target("aarch64-linux-gnu", "neoverse-v1");
  REQUIRE(target.ok());
  auto backend = api::Backend::create(*target);
  REQUIRE(backend.ok());
  auto kernel = (*backend)->compile(matmul(8, 8, 8));
  REQUIRE_FALSE(kernel.ok());
  CHECK(kernel.error().id() == "not-this-machine");
  CHECK_THAT(kernel.error().message(), Catch::Contains("kiln export"));
}

TEST_CASE("A kernel whose schedule packs a weight refuses to run before prepack") {
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/conv2d_nchw.kop",
                               {{"C", "3"}, {"H", "10"}, {"W", "9"}, {"K", "8"}});
  REQUIRE(dag.ok());
  auto steps = schedule::steps_from_json(R"([
    {"step":"compute_inline","stage":"padded"},
    {"step":"cache_read","stage":"kernel","reader":"conv"}])");
  REQUIRE(steps.ok());
  record::Record packing;
  packing.task = record::TaskInfo::from_dag(*dag, "backend_test");
  packing.config.steps = *steps;
  auto backend = api::Backend::create();
  REQUIRE(backend.ok());
  auto kernel = (*backend)->compile(*dag, packing, "a packing schedule");
  REQUIRE(kernel.ok());
  std::vector<Buffer> buffers;
  std::vector<void*> args;
  for (int s : dag->arguments()) {
    buffers.push_back(buffer(dag->stage(s).num_elements()));
    std::fill(buffers.back().get(), buffers.back().get() + dag->stage(s).num_elements(), 1.0f);
    args.push_back(buffers.back().get());
  }
  auto err = (*kernel)->run(args.data());
  REQUIRE(err);
  CHECK(err->id() == "not-prepacked");
  (*kernel)->prepack(args.data());
  CHECK_FALSE((*kernel)->run(args.data()));
  CHECK(max_error(**kernel) < 1e-4);
}

TEST_CASE("The C API reports bad arguments and anything thrown as statuses with ids") {
  kiln_op* op = nullptr;
  CHECK(kiln_op_parse(nullptr, nullptr, 0, &op) == KILN_ERROR_ARGUMENT);
  CHECK(std::string(kiln_last_error_id()) == "bad-argument");
  CHECK(capi::guarded(KILN_ERROR_TUNE, []() -> kiln_status { throw std::bad_alloc(); }) ==
        KILN_ERROR_TUNE);
  CHECK(std::string(kiln_last_error_id()) == "out-of-memory");
  CHECK(capi::guarded(KILN_ERROR_TUNE, []() -> kiln_status {
          throw std::runtime_error("a bug");
        }) == KILN_ERROR_INTERNAL);
  CHECK(std::string(kiln_last_error_id()) == "internal-error");
  CHECK_THAT(std::string(kiln_last_error()), Catch::Contains("a bug"));
  CHECK(capi::guarded(KILN_ERROR_TUNE, [] { return KILN_OK; }) == KILN_OK);
  CHECK(std::string(kiln_last_error_id()).empty());
}
