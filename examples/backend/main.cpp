// A toy compiler backend on kiln's C++ API. It lowers one "layer" of its
// own IR, a dense layer relu(x·W + b) with constant weights, to a kiln op
// built in C++, optionally tunes it (what an offline tuning job would do),
// then, as every later compile does, applies the history best of the log,
// compiles the kernel into the process, calls it, and checks the answer
// against kiln's interpreter.
//
//   toy-backend --log LOG [--tune TRIALS] [--batch N]
#include "kiln/api/backend.h"
#include "kiln/ir/builder.h"
#include "kiln/ir/interpreter.h"
#include "kiln/support/install_paths.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

/// The backend's own layer description.
struct DenseLayer {
  std::int64_t batch, in, out;
};

/// The layer as a kiln op: Y[n, o] = max(sum_i X[n, i] * W[i, o] + B[o], 0).
/// DAGBuilder::build throws kiln::UserError for a DAG that is not valid (a
/// bug of this backend's lowering, so main lets it end the program).
kiln::ir::ComputeDAG lower_to_kiln(const DenseLayer& layer) {
  using namespace kiln::ir;
  DAGBuilder b("dense_bias_relu");
  Tensor x = b.input("X", {layer.batch, layer.in});
  Tensor w = b.constant_input("W", {layer.in, layer.out});
  Tensor bias = b.constant_input("B", {layer.out});
  IterVar i{"i", layer.in};
  // A reduction is a stage of its own; the bias and relu fuse after it.
  Tensor xw =
      b.compute("XW", {{"n", layer.batch}, {"o", layer.out}}, [&](const std::vector<Expr>& v) {
        return sum(x(v[0], var(i)) * w(var(i), v[1]), {i});
      });
  Tensor y =
      b.compute("Y", {{"n", layer.batch}, {"o", layer.out}}, [&](const std::vector<Expr>& v) {
        return max(xw(v[0], v[1]) + bias(v[1]), Expr(0.0));
      });
  b.output(y);
  b.param("batch", layer.batch);
  b.param("in", layer.in);
  b.param("out", layer.out);
  return std::move(b).build();
}

struct FreeAligned {
  void operator()(float* p) const { std::free(p); }
};

/// Calls the kernel on seeded data; returns the largest difference from the
/// interpreter's answer.
double check_against_interpreter(kiln::api::Kernel& kernel) {
  const kiln::ir::ComputeDAG& dag = kernel.dag();
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::unique_ptr<float, FreeAligned>> buffers;
  std::vector<void*> args;
  std::map<std::string, std::vector<double>> inputs;
  for (int s : dag.arguments()) {
    const kiln::ir::Stage& stage = dag.stage(s);
    const std::int64_t n = stage.num_elements();
    // Kernels take 64-byte aligned buffers (docs/kernel-abi.md).
    buffers.emplace_back(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64)));
    if (stage.is_placeholder())
      for (std::int64_t e = 0; e < n; ++e)
        inputs[stage.name].push_back(buffers.back().get()[e] = dist(rng));
    args.push_back(buffers.back().get());
  }
  kernel.prepack(args.data()); // once: the weights are constant
  if (auto err = kernel.run(args.data())) {
    std::fprintf(stderr, "toy-backend: %s\n", err->render().c_str());
    return INFINITY;
  }
  kiln::ir::Interpreter interpreter(dag, inputs);
  std::vector<double> expected = interpreter.evaluate(dag.arguments().back());
  double worst = 0;
  for (std::size_t e = 0; e < expected.size(); ++e)
    worst = std::max(worst, std::abs(expected[e] - buffers.back().get()[e]));
  return worst;
}

int fail(const kiln::Error& e) {
  std::fprintf(stderr, "%s\n", e.render().c_str());
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  std::string log;
  int tune_trials = 0;
  std::int64_t batch = 1;
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--log"))
      log = argv[a + 1];
    else if (!std::strcmp(argv[a], "--tune"))
      tune_trials = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--batch"))
      batch = std::atoll(argv[a + 1]);
  }
  if (log.empty()) {
    std::fprintf(stderr, "usage: toy-backend --log LOG [--tune TRIALS] [--batch N]\n");
    return 2;
  }
#ifdef KILN_PACKAGE_PREFIX
  // Where the kiln package was found: a static libkiln cannot tell where it
  // was installed on its own (docs/library.md).
  kiln::set_install_prefix(KILN_PACKAGE_PREFIX);
#endif

  auto backend = kiln::api::Backend::create();
  if (!backend)
    return fail(backend.error());
  if (std::filesystem::exists(log))
    if (auto err = (*backend)->load_logs({log}))
      return fail(*err);

  const DenseLayer layer{batch, 96, 80};
  kiln::ir::ComputeDAG dag = lower_to_kiln(layer);
  if (tune_trials > 0) {
    kiln::search::SessionOptions options = (*backend)->tune_options(log);
    options.tune.trials = tune_trials;
    auto tuned = (*backend)->tune(dag, options);
    if (!tuned)
      return fail(tuned.error());
    std::printf("tuned %s: %lld trials\n", dag.workload_key().c_str(),
                static_cast<long long>(tuned->tune.trials));
  }

  kiln::api::BestRecord best = (*backend)->best(dag);
  std::printf("%s: %s\n", dag.workload_key().c_str(), best.description.c_str());
  auto kernel = (*backend)->compile(dag);
  if (!kernel)
    return fail(kernel.error());
  double error = check_against_interpreter(**kernel);
  std::printf("dense %lldx%lldx%lld: max error %.3g against the interpreter\n",
              static_cast<long long>(layer.batch), static_cast<long long>(layer.in),
              static_cast<long long>(layer.out), error);
  return error < 1e-3 ? 0 : 1;
}
