// kiln-bench: a kiln schedule timed against the libraries in the same run
// (OpenBLAS sgemm and oneDNN matmul and inner product for matmul, oneDNN
// for conv2d, depthwise conv2d, softmax and layer normalization), alternating
// between the two, with 1 and 2 threads; and the JIT compile time of the
// schedule split by phase. docs/benchmarks.md has the commands and figures.
//
// The kernel is exactly what `kiln run OPFILE --set … --schedule FILE`
// builds: the op file is parsed with the same overrides, the schedule file
// replayed, lowered, compiled for the host, loaded into the JIT and checked
// against the interpreter before anything is timed.
#include "fma_peak.h"
#include "memory_bandwidth.h"
#include "onednn_baselines.h"

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/jit.h"
#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/checker.h"
#include "kiln/measure/timer.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/support/error.h"
#include "kiln/support/stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cblas.h>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <dnnl_debug.h>
#include <functional>
#include <memory>
#include <omp.h>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace kiln;

namespace {

struct Options {
  std::string op = "matmul";
  std::string opfile;   ///< default: ops/<op file of --op>
  std::string schedule; ///< default: bench/schedules/<file of --op>
  std::string baseline; ///< another schedule timed in the same rounds (e.g. the hand-written one)
  std::vector<std::string> sets;
  std::vector<int> threads{1, 2};
  int rounds = 10;
  double min_round_ms = 200;
  int compile_runs = 20;
  bool onednn_any = true;
  bool kiln_only = false;
  bool bandwidth = true;
  std::uint64_t seed = 1;
};

std::string trim(std::string s) {
  s.erase(0, s.find_first_not_of(' '));
  s.erase(s.find_last_not_of(' ') + 1);
  return s;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double minimum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

double maximum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

[[noreturn]] void die(const Error& e) {
  std::fprintf(stderr, "%s\n", e.render().c_str());
  std::exit(1);
}

template <typename T> T take(Expected<T> e) {
  if (!e)
    die(e.error());
  return std::move(*e);
}

std::optional<std::int64_t> find_param(const ir::ComputeDAG& dag, const std::string& name) {
  for (const ir::Param& p : dag.params())
    if (p.name == name)
      return p.value;
  return std::nullopt;
}

std::int64_t param(const ir::ComputeDAG& dag, const std::string& name) {
  if (auto value = find_param(dag, name))
    return *value;
  die(Error("bench", fmt::format("op '{}' has no parameter '{}'", dag.name(), name)));
}

/// A library the kernel is compared with, on the kernel's input buffers.
/// `prepare(threads)` sets the library's thread count and rebuilds what
/// depends on it (a oneDNN primitive fixes its work split when it is
/// created); `run` is what is timed; `output` is its answer in kiln's layout.
struct Library {
  std::string name;
  std::function<void(int)> prepare;
  std::function<void()> run;
  std::function<const float*()> output;
};

/// OpenBLAS sgemm, row-major, no transposes: C = A·B.
struct Sgemm {
  Sgemm(const ir::ComputeDAG& dag, float* a, float* b)
      : m(param(dag, "M")), n(param(dag, "N")), k(param(dag, "K")), a(a), b(b),
        c(static_cast<float*>(kiln_rt_alloc(m * n * 4)), kiln_rt_free) {}
  void run() const {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0f, a, static_cast<int>(k), b, static_cast<int>(n), 0.0f,
                c.get(), static_cast<int>(n));
  }
  std::int64_t m, n, k;
  float *a, *b;
  std::unique_ptr<float, void (*)(void*)> c;
};

/// What `--op` benchmarks: the op (its file in ops/) and its hand-written
/// schedule in bench/schedules/.
struct Benchmark {
  std::string_view flag, op_name, schedule;
};

const Benchmark& benchmark(std::string_view flag) {
  static const Benchmark benchmarks[] = {{"matmul", "matmul", "matmul_1024"},
                                         {"conv2d", "conv2d_nchw", "conv2d_resnet"},
                                         {"conv2d_nchwc", "conv2d_nchwc", "conv2d_nchwc"},
                                         {"conv2d_nhwc", "conv2d_nhwc", "conv2d_nhwc"},
                                         {"depthwise", "depthwise_conv2d", "depthwise"},
                                         {"softmax", "softmax", "softmax"},
                                         {"layer_norm", "layer_norm", "layer_norm"}};
  for (const Benchmark& b : benchmarks)
    if (b.flag == flag)
      return b;
  die(Error("bench", fmt::format("no benchmark '{}'", flag)));
}

/// The layouts of a kiln conv2d op's tensors as oneDNN format tags:
/// conv2d_nchw is nchw / oihw / nchw, conv2d_nhwc nhwc / hwio / nhwc,
/// depthwise_conv2d nchw / goihw (one group per channel) / nchw;
/// conv2d_nchwc blocks the channels by its VB (8 or 16), nChw{VB}c /
/// OIhw{VB}i{VB}o / nChw{VB}c.
struct ConvLayouts {
  dnnl::memory::format_tag src, wei, dst;
};

ConvLayouts conv_layouts(const ir::ComputeDAG& dag) {
  using tag = dnnl::memory::format_tag;
  if (dag.name() == "conv2d_nhwc")
    return {tag::nhwc, tag::hwio, tag::nhwc};
  if (dag.name() == "depthwise_conv2d")
    return {tag::nchw, tag::goihw, tag::nchw};
  if (dag.name() != "conv2d_nchwc")
    return {tag::nchw, tag::oihw, tag::nchw};
  switch (param(dag, "VB")) {
  case 8:
    return {tag::nChw8c, tag::OIhw8i8o, tag::nChw8c};
  case 16:
    return {tag::nChw16c, tag::OIhw16i16o, tag::nChw16c};
  default:
    die(Error("bench", fmt::format("conv2d_nchwc: oneDNN blocks channels by 8 or 16, not VB={}; "
                                   "pass --set VB=16",
                                   param(dag, "VB"))));
  }
}

/// oneDNN forward convolution. With `plain` the tensors are in the layouts
/// kiln's kernel uses (conv_layouts); otherwise oneDNN picks its own
/// (blocked) layouts and the inputs are reordered once, outside the timing.
struct Conv {
  Conv(const ir::ComputeDAG& dag, float* data, float* weights, bool plain)
      : engine(dnnl::engine::kind::cpu, 0), stream(engine) {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    // conv2d_nchwc counts its channels in blocks of VB; a depthwise
    // convolution is one group per channel, one filter each.
    const bool blocked = dag.name() == "conv2d_nchwc";
    const bool depthwise = dag.name() == "depthwise_conv2d";
    std::int64_t vb = blocked ? param(dag, "VB") : 1;
    std::int64_t n = param(dag, "N"), c = param(dag, blocked ? "CB" : "C") * vb,
                 h = param(dag, "H"), w = param(dag, "W"),
                 k = depthwise ? c : param(dag, blocked ? "KB" : "K") * vb, r = param(dag, "R"),
                 s = param(dag, "S"), stride = find_param(dag, "stride").value_or(1),
                 pad = param(dag, "pad");
    std::int64_t oh = (h + 2 * pad - r) / stride + 1, ow = (w + 2 * pad - s) / stride + 1;
    dnnl::memory::dims src_dims{n, c, h, w}, dst_dims{n, k, oh, ow};
    dnnl::memory::dims wei_dims =
        depthwise ? dnnl::memory::dims{c, 1, 1, r, s} : dnnl::memory::dims{k, c, r, s};
    ConvLayouts kiln = conv_layouts(dag);
    dnnl::memory::desc src_user(src_dims, dt::f32, kiln.src);
    dnnl::memory::desc wei_user(wei_dims, dt::f32, kiln.wei);
    dnnl::memory::desc dst_user(dst_dims, dt::f32, kiln.dst);
    dnnl::memory::desc src_md = plain ? src_user : dnnl::memory::desc(src_dims, dt::f32, tag::any);
    dnnl::memory::desc wei_md = plain ? wei_user : dnnl::memory::desc(wei_dims, dt::f32, tag::any);
    dnnl::memory::desc dst_md = plain ? dst_user : dnnl::memory::desc(dst_dims, dt::f32, tag::any);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, src_md, wei_md,
                                         dst_md, {stride, stride}, {pad, pad}, {pad, pad});
    dnnl::convolution_forward::primitive_desc pd(desc, engine);
    impl = pd.impl_info_str();
    conv = dnnl::convolution_forward(pd);
    dnnl::memory src_mem(src_user, engine, data), wei_mem(wei_user, engine, weights);
    src = reordered(src_mem, pd.src_desc());
    wei = reordered(wei_mem, pd.weights_desc());
    dst = dnnl::memory(pd.dst_desc(), engine);
    user_dst = dnnl::memory(dst_user, engine);
    plain_dst = pd.dst_desc() == dst_user;
  }

  void run() {
    conv.execute(
        stream,
        {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, plain_dst ? user_dst : dst}});
    stream.wait();
  }

  /// The output in kiln's layout (reordered when oneDNN used another).
  const float* output() {
    if (!plain_dst) {
      dnnl::reorder(dst, user_dst).execute(stream, dst, user_dst);
      stream.wait();
    }
    return static_cast<const float*>(user_dst.get_data_handle());
  }

  dnnl::memory reordered(dnnl::memory& from, const dnnl::memory::desc& want) {
    if (from.get_desc() == want)
      return from;
    dnnl::memory to(want, engine);
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
    return to;
  }

  dnnl::engine engine;
  dnnl::stream stream;
  dnnl::convolution_forward conv;
  dnnl::memory src, wei, dst, user_dst;
  bool plain_dst = true;
  std::string impl; ///< the implementation oneDNN chose
};

/// Largest |a - b| relative to the largest |b|.
double relative_difference(const float* a, const float* b, std::int64_t n) {
  double diff = 0, scale = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(b[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

/// Where JIT compile time goes for one schedule, median over `runs`
/// compilations with one Compiler and one Jit (as a tuning worker has):
/// replaying the steps, lowering to the loop nest, LLVM IR, the O3
/// pipeline, machine code, and linking the object into the JIT.
void report_compile_times(const ir::ComputeDAG& dag, const std::vector<schedule::Step>& steps,
                          const Target& target, int runs) {
  auto compiler = take(codegen::Compiler::create(target));
  auto jit = take(codegen::Jit::create());
  std::vector<double> replay, lower, ir, opt, mc, link, total;
  for (int r = 0; r < runs; ++r) {
    Stopwatch clock;
    schedule::State state = take(schedule::State::replay(dag, steps));
    double replay_ms = clock.lap_ms();
    schedule::LoweredFunc func = schedule::lower(state);
    double lower_ms = clock.lap_ms();
    auto object = take(compiler->compile(func));
    auto kernel = take(jit->load(object));
    replay.push_back(replay_ms);
    lower.push_back(lower_ms);
    ir.push_back(object.times.ir_ms);
    opt.push_back(object.times.opt_ms);
    mc.push_back(object.times.codegen_ms);
    link.push_back(kernel->link_ms());
    total.push_back(replay_ms + lower_ms + object.times.total_ms() + kernel->link_ms());
  }
  fmt::print("compile:  median of {} compilations, ms: replay {:.2f}, lowering {:.2f}, "
             "LLVM IR {:.2f}, optimise {:.2f}, machine code {:.2f}, link {:.2f}\n"
             "          total {:.2f} median (min {:.2f}, max {:.2f}; the first {:.2f})\n",
             runs, median(replay), median(lower), median(ir), median(opt), median(mc), median(link),
             median(total), minimum(total), maximum(total), total.front());
}

/// GFLOPS of one round: calls `fn` until the round lasts min_round_ms.
double round_gflops(const std::function<void()>& fn, double flops, double min_round_ms) {
  measure::TimingOptions timing;
  timing.warmup = 1;
  timing.repeat = 1;
  timing.min_repeat_ms = min_round_ms;
  measure::Timing t = measure::time_function(fn, timing);
  return flops / t.median() / 1e9;
}

/// Waits for the other side's threads to go to sleep: OpenBLAS workers spin
/// (sched_yield) for ~0.1 s after a call, libgomp's briefly, and a spinning
/// worker would take a core from whoever is timed next.
void settle() {
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
}

struct Figures {
  std::vector<double> kiln, library, ratio;
};

/// `bytes` is the least memory traffic of one call (every argument read or
/// written once); `bandwidth_gbs` the machine's triad bandwidth with these
/// threads (0: not measured).
void compare(const std::function<void()>& kiln_fn, const std::vector<Library*>& libraries,
             double flops, double bytes, double bandwidth_gbs, const Options& options,
             int threads) {
  kiln_rt_set_num_threads(threads);
  for (Library* lib : libraries)
    lib->prepare(threads);
  std::vector<Figures> figures(libraries.size());
  std::vector<double> kiln_all;
  for (int round = 0; round < options.rounds; ++round) {
    // Alternate which side goes first, so neither always runs warm.
    double kiln_gflops = 0;
    std::vector<double> lib_gflops(libraries.size());
    auto run_kiln = [&] {
      settle();
      kiln_gflops = round_gflops(kiln_fn, flops, options.min_round_ms);
    };
    auto run_libs = [&] {
      for (size_t l = 0; l < libraries.size(); ++l) {
        settle();
        lib_gflops[l] = round_gflops(libraries[l]->run, flops, options.min_round_ms);
      }
    };
    if (round % 2 == 0) {
      run_kiln();
      run_libs();
    } else {
      run_libs();
      run_kiln();
    }
    kiln_all.push_back(kiln_gflops);
    for (size_t l = 0; l < libraries.size(); ++l) {
      figures[l].kiln.push_back(kiln_gflops);
      figures[l].library.push_back(lib_gflops[l]);
      figures[l].ratio.push_back(kiln_gflops / lib_gflops[l]);
    }
  }
  // GB/s of the arguments' bytes, at the median GFLOPS.
  auto gbs = [&](double gflops) { return gflops * bytes / flops; };
  std::string of_bandwidth =
      bandwidth_gbs > 0
          ? fmt::format(", {:.0f}% of the triad's", 100 * gbs(median(kiln_all)) / bandwidth_gbs)
          : "";
  fmt::print("threads {}: kiln {:7.2f} GFLOPS median (min {:.2f}, max {:.2f}); {:.1f} GB/s of "
             "its arguments{}\n",
             threads, median(kiln_all), minimum(kiln_all), maximum(kiln_all), gbs(median(kiln_all)),
             of_bandwidth);
  for (size_t l = 0; l < libraries.size(); ++l) {
    const Figures& f = figures[l];
    fmt::print("           {:<28} {:7.2f} GFLOPS median (min {:.2f}, max {:.2f}; {:.1f} GB/s); "
               "kiln/library {:.3f} (ratio of medians), {:.3f} (median of per-round ratios)\n",
               libraries[l]->name, median(f.library), minimum(f.library), maximum(f.library),
               gbs(median(f.library)), median(f.kiln) / median(f.library), median(f.ratio));
  }
}

/// A schedule file's kernel, built as `kiln run` builds it and checked
/// against the interpreter on its own buffers.
struct KilnKernel {
  std::vector<schedule::Step> steps;
  std::unique_ptr<codegen::LoadedKernel> kernel;
  std::unique_ptr<measure::ArgumentBuffers> buffers;
  measure::CheckReport check;
  void run() const { kernel->run(buffers->pointers()); }
  const float* output() const {
    return static_cast<const float*>(buffers->pointers()[buffers->size() - 1]);
  }
};

KilnKernel build_kernel(const ir::ComputeDAG& dag, const std::string& schedule_file,
                        codegen::Compiler& compiler, codegen::Jit& jit, std::uint64_t seed) {
  KilnKernel k;
  schedule::State state = take(schedule::State::load(dag, schedule_file));
  k.steps = state.steps();
  schedule::LoweredFunc func = schedule::lower(state);
  auto object = take(compiler.compile(func));
  k.kernel = take(jit.load(object));
  k.buffers = std::make_unique<measure::ArgumentBuffers>(dag, seed);
  // Constant inputs packed ahead once, as a user's program would: the
  // libraries' figures leave their weight reorders out the same way.
  k.kernel->prepack(k.buffers->pointers());
  k.run();
  k.check = measure::check_outputs(dag, *k.buffers);
  return k;
}

int run(const Options& options) {
  const bool is_matmul = options.op == "matmul";
  std::string opfile = options.opfile;
  std::string schedule_file = options.schedule;
  std::vector<std::string> sets = options.sets;
  const Benchmark& bench = benchmark(options.op);
  if (opfile.empty())
    opfile = fmt::format("{}/ops/{}.kop", KILN_SOURCE_DIR, bench.op_name);
  if (schedule_file.empty() && bench.schedule.empty())
    die(Error("bench", fmt::format("--op {} has no hand-written schedule: pass --schedule, e.g. "
                                   "the LOG.best.json of a `kiln tune` run",
                                   options.op)));
  if (schedule_file.empty())
    schedule_file = fmt::format("{}/bench/schedules/{}.json", KILN_SOURCE_DIR, bench.schedule);
  if (sets.empty() && is_matmul)
    sets = {"M=1024", "N=1024", "K=1024"};

  ir::ParamOverrides overrides;
  for (const std::string& s : sets)
    overrides.push_back(take(ir::parse_override(s)));
  ir::ComputeDAG dag = take(ir::parse_op_file(opfile, overrides));
  if (dag.name() != bench.op_name)
    die(Error("bench", fmt::format("{}: --op {} compares an op '{}' with the libraries, but the "
                                   "file defines '{}'; pass --op for it or --opfile of a '{}'",
                                   opfile, options.op, bench.op_name, dag.name(), bench.op_name)));
  for (int index : dag.arguments())
    if (dag.stage(index).dtype != ir::ScalarType::F32)
      die(Error("bench", fmt::format("{}: the benchmarks compare f32 kernels, but '{}' is not f32",
                                     opfile, dag.stage(index).name)));

  Target target = codegen::host_target();
  std::string params;
  for (const ir::Param& p : dag.params())
    params += fmt::format("{}{}={}", params.empty() ? "" : " ", p.name, p.value);
  fmt::print("op:       {} ({}) from {}\nschedule: {}\ntarget:   {} {}, {} bits, {} cores\n",
             dag.name(), params, opfile, schedule_file, target.triple, target.cpu,
             target.vector_bits, target.cores);

  // Build, load and check the kernel (and the baseline's).
  auto compiler = take(codegen::Compiler::create(target));
  auto jit = take(codegen::Jit::create());
  KilnKernel kiln = build_kernel(dag, schedule_file, *compiler, *jit, options.seed);
  fmt::print("check:    {}\n", kiln.check.describe());
  if (!kiln.check.passed)
    return 1;
  std::optional<KilnKernel> baseline;
  if (!options.baseline.empty()) {
    baseline = build_kernel(dag, options.baseline, *compiler, *jit, options.seed);
    fmt::print("baseline: {}\ncheck:    {}\n", options.baseline, baseline->check.describe());
    if (!baseline->check.passed)
      return 1;
  }
  void** args = kiln.buffers->pointers();
  const float* kiln_out = kiln.output();
  std::int64_t out_elements = kiln.buffers->num_elements(kiln.buffers->size() - 1);
  auto kiln_fn = [&] { kiln.run(); };
  double flops = dag.flop_count();
  fmt::print("flops:    {:.4g} a call\n", flops);

  // The libraries, on the same input buffers.
  std::vector<std::unique_ptr<Library>> libraries;
  std::unique_ptr<Sgemm> sgemm;
  std::unique_ptr<Conv> conv_plain, conv_any;
  auto* in0 = static_cast<float*>(args[0]);
  auto* in1 = static_cast<float*>(args[1]);
  const dnnl_version_t* v = dnnl_version();
  const std::string version = fmt::format("oneDNN {}.{}", v->major, v->minor);
  // A oneDNN primitive is made again for each thread count (it fixes its
  // work split when it is created).
  std::vector<std::unique_ptr<std::unique_ptr<bench::OneDnnPrimitive>>> primitives;
  auto onednn_library = [&](std::string name,
                            std::function<std::unique_ptr<bench::OneDnnPrimitive>()> make) {
    auto& slot =
        *primitives.emplace_back(std::make_unique<std::unique_ptr<bench::OneDnnPrimitive>>());
    auto prepare = [&slot, make](int threads) {
      omp_set_num_threads(threads);
      slot = make();
    };
    libraries.push_back(std::make_unique<Library>(Library{
        std::move(name), prepare, [&slot] { slot->run(); }, [&slot] { return slot->output(); }}));
    return &slot;
  };
  std::vector<std::pair<std::string, std::unique_ptr<bench::OneDnnPrimitive>*>> onednn_impls;
  if (is_matmul) {
    sgemm = std::make_unique<Sgemm>(dag, in0, in1);
    libraries.push_back(std::make_unique<Library>(
        Library{fmt::format("{} sgemm ({})", trim(OPENBLAS_VERSION), openblas_get_corename()),
                [](int threads) { openblas_set_num_threads(threads); }, [&] { sgemm->run(); },
                [&] { return static_cast<const float*>(sgemm->c.get()); }}));
    const std::int64_t m = param(dag, "M"), n = param(dag, "N"), k = param(dag, "K");
    onednn_impls.emplace_back("matmul", onednn_library(version + " matmul", [=] {
                                return std::make_unique<bench::OneDnnMatmul>(m, n, k, in0, in1);
                              }));
    onednn_impls.emplace_back("inner product", onednn_library(version + " inner product", [=] {
                                return std::make_unique<bench::OneDnnInnerProduct>(m, n, k, in0,
                                                                                   in1);
                              }));
  } else if (dag.name() == "softmax") {
    const std::int64_t m = param(dag, "M"), n = param(dag, "N");
    onednn_impls.emplace_back("softmax", onednn_library(version + " softmax", [=] {
                                return std::make_unique<bench::OneDnnSoftmax>(m, n, in0);
                              }));
  } else if (dag.name() == "layer_norm") {
    const std::int64_t m = param(dag, "M"), n = param(dag, "N");
    auto* in2 = static_cast<float*>(args[2]);
    onednn_impls.emplace_back(
        "layer normalization", onednn_library(version + " layer normalization", [=] {
          return std::make_unique<bench::OneDnnLayerNorm>(m, n, in0, in1, in2, 1e-5f);
        }));
  } else {
    auto conv_library = [&](std::unique_ptr<Conv>& conv, bool plain, std::string name) {
      auto prepare = [&conv, &dag, in0, in1, plain](int threads) {
        omp_set_num_threads(threads);
        conv = std::make_unique<Conv>(dag, in0, in1, plain);
      };
      return std::make_unique<Library>(Library{std::move(name), prepare, [&conv] { conv->run(); },
                                               [&conv] { return conv->output(); }});
    };
    std::string layout = dag.name() == "conv2d_nchwc" ? fmt::format("nChw{}c", param(dag, "VB"))
                         : dag.name() == "depthwise_conv2d" ? "nchw depthwise"
                         : dag.name() == "conv2d_nhwc"      ? "nhwc"
                                                            : "nchw";
    libraries.push_back(conv_library(conv_plain, true, fmt::format("{} conv {}", version, layout)));
    if (options.onednn_any)
      libraries.push_back(conv_library(conv_any, false, version + " conv own layout"));
  }
  for (const auto& lib : libraries) {
    lib->prepare(options.threads.empty() ? 1 : options.threads.front());
    lib->run();
    fmt::print("compare:  kiln vs {}: max |difference| {:.3g} of the largest |value|\n", lib->name,
               relative_difference(kiln_out, lib->output(), out_elements));
  }
  if (conv_plain) {
    auto tag_name = [](dnnl::memory::format_tag t) {
      return dnnl_fmt_tag2str(static_cast<dnnl_format_tag_t>(t));
    };
    ConvLayouts kiln_layouts = conv_layouts(dag);
    fmt::print("oneDNN:   kiln's layouts ({}/{}/{}): {}\n", tag_name(kiln_layouts.src),
               tag_name(kiln_layouts.wei), tag_name(kiln_layouts.dst), conv_plain->impl);
  }
  if (conv_any)
    fmt::print("oneDNN:   own layouts (reorders not timed): {}\n", conv_any->impl);
  for (const auto& [what, primitive] : onednn_impls)
    fmt::print("oneDNN:   {}: {}\n", what, (*primitive)->impl());

  std::vector<Library*> libs;
  for (const auto& lib : libraries)
    if (!options.kiln_only)
      libs.push_back(lib.get());
  // The baseline schedule is timed as one more library, so that its ratio
  // to the kernel comes from the same rounds.
  Library baseline_side{"kiln baseline schedule", [](int) {}, [&] { baseline->run(); },
                        [&] { return baseline->output(); }};
  if (baseline)
    libs.push_back(&baseline_side);
  fmt::print("timing:   {} rounds; each round times kiln and each library for >= {} ms, "
             "alternating which goes first\n",
             options.rounds, options.min_round_ms);
  double bytes = 0;
  for (int i = 0; i < kiln.buffers->size(); ++i)
    bytes += static_cast<double>(kiln.buffers->num_elements(i)) * sizeof(float);
  for (int t : options.threads) {
    // Arrays of 8x the last-level cache (256 MiB when it is unknown), so
    // that the triad streams from memory.
    double bandwidth = 0;
    if (options.bandwidth) {
      std::int64_t array_bytes =
          target.l3_bytes > 0 ? 8 * target.l3_bytes : std::int64_t{256} << 20;
      bandwidth = bench::triad_bandwidth_gbs(array_bytes, t);
      fmt::print("memory:   triad {:.1f} GB/s with {} thread{} (arrays of {} MiB)\n", bandwidth, t,
                 t == 1 ? "" : "s", array_bytes >> 20);
    }
    const bench::FmaPeak peak = take(bench::fma_peak(target, t));
    fmt::print("peak:     f32 FMA {:.1f} GFLOPS with {} thread{} ({} chains of {} lanes)\n",
               peak.gflops, t, t == 1 ? "" : "s", peak.accumulators, peak.lanes);
    compare(kiln_fn, libs, flops, bytes, bandwidth, options, t);
  }

  if (options.compile_runs > 0)
    report_compile_times(dag, kiln.steps, target, options.compile_runs);
  return 0;
}

} // namespace

/// OpenBLAS picks its kernels when the library loads, before main, unless
/// OPENBLAS_CORETYPE names them (this environment names Haswell's, AVX2).
/// The bench times OpenBLAS with the best kernels for the CPU, set in its
/// own environment only: when the variable names other kernels than
/// `--openblas-core` asks for, the bench runs itself again with it changed
/// (OPENBLAS_L2_SIZE, tuned to the other kernels, is dropped).
void use_openblas_core(const std::string& wanted, char** argv) {
  std::string core = wanted;
  if (core == "auto")
    core = __builtin_cpu_supports("avx512f") ? "SkylakeX"
           : __builtin_cpu_supports("avx2")  ? "Haswell"
                                             : "";
  if (core.empty() || core == "env")
    return;
  const char* current = std::getenv("OPENBLAS_CORETYPE");
  if (current && core == current)
    return;
  ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  ::unsetenv("OPENBLAS_L2_SIZE");
  ::execv("/proc/self/exe", argv);
  std::fprintf(stderr, "kiln-bench: cannot run itself again with OPENBLAS_CORETYPE=%s: %s\n",
               core.c_str(), std::strerror(errno));
  std::exit(1);
}

int main(int argc, char** argv) {
  CLI::App app{"kiln-bench: kiln schedules against OpenBLAS and oneDNN"};
  Options options;
  std::string openblas_core = "auto";
  app.add_option("--openblas-core", openblas_core,
                 "OpenBLAS kernels to time: auto (the best for this CPU: SkylakeX with AVX-512, "
                 "Haswell with AVX2), env (as OPENBLAS_CORETYPE says), or an OpenBLAS core name")
      ->capture_default_str();
  app.add_option("--op", options.op, "which benchmark")
      ->check(CLI::IsMember({"matmul", "conv2d", "conv2d_nchwc", "conv2d_nhwc", "depthwise",
                             "softmax", "layer_norm"}))
      ->capture_default_str();
  app.add_option("--opfile", options.opfile,
                 "operator file (default: the op's file in ops/: matmul, conv2d_nchw, "
                 "conv2d_nchwc, conv2d_nhwc, depthwise_conv2d, softmax or layer_norm)");
  app.add_option("--schedule", options.schedule,
                 "schedule file (default: the op's hand-written schedule in bench/schedules/: "
                 "matmul_1024, conv2d_resnet, conv2d_nchwc, conv2d_nhwc, depthwise, softmax or "
                 "layer_norm)");
  app.add_option("--baseline", options.baseline,
                 "another schedule file timed in the same rounds, e.g. a tuned kernel's "
                 "LOG.best.json against the hand-written schedule");
  app.add_option("--set", options.sets,
                 "override a parameter, NAME=VALUE (repeatable; default for matmul: "
                 "M=N=K=1024)");
  app.add_option("--threads", options.threads, "thread counts to time, e.g. --threads 1 2")
      ->capture_default_str();
  app.add_option("--repeat", options.rounds, "rounds (each times kiln and the library once)")
      ->capture_default_str();
  app.add_option("--min-round-ms", options.min_round_ms,
                 "each side calls its kernel until a round lasts this long")
      ->capture_default_str();
  app.add_option("--compile-runs", options.compile_runs,
                 "compilations for the compile-time median (0: skip)")
      ->capture_default_str();
  app.add_flag("!--no-onednn-own-layout", options.onednn_any,
               "conv2d: skip oneDNN with its own blocked layouts");
  app.add_flag("!--no-bandwidth", options.bandwidth,
               "skip measuring the memory bandwidth (a triad) before each thread count");
  app.add_flag("--kiln-only", options.kiln_only,
               "time kiln alone (for tuning a schedule; no ratios)");
  app.add_option("--seed", options.seed, "seed of the random inputs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  use_openblas_core(openblas_core, argv);
  try {
    return run(options);
  } catch (const UserError& e) {
    die(e.error());
  } catch (const dnnl::error& e) {
    std::fprintf(stderr, "oneDNN error: %s\n", e.what());
    return 1;
  }
}
