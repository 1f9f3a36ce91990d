// kiln-tuning-bench: how fast the tuning pipeline turns configs into
// answers, stage by stage, on one task (default: fp32 matmul 512³):
//
//  1. sampling: random sketch configs per second, alone and with their steps
//     (what a search strategy draws before it predicts anything);
//  2. prediction: features plus the cost model's scores for 2,048 configs
//     (one round of an evolutionary search scores this many);
//  3. measurement: trials per second for batches of random valid States,
//     with the in-process runner and with the isolated runner (kiln-worker,
//     a spawned process), and the split of the wall time between building (lowering,
//     LLVM, machine code on the builder's threads) and running (checking
//     the answer and timing, one candidate at a time).
//
// The same seeded configs go to both runners. docs/benchmarks.md has the
// command and the figures. Nothing here is a test: no figure is asserted.
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/measurer.h"
#include "kiln/model/features.h"
#include "kiln/model/xgboost_model.h"
#include "kiln/record/record.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/search/search_space.h"
#include "kiln/search/strategy.h"
#include "kiln/space/sketch.h"
#include "kiln/support/error.h"
#include "kiln/support/stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace kiln;

namespace {

struct Options {
  std::string opfile = KILN_SOURCE_DIR "/ops/matmul.kop";
  std::vector<std::string> sets{"M=512", "N=512", "K=512"};
  std::string model = KILN_SOURCE_DIR "/data/kiln-default.model";
  int batches = 8;
  int batch_size = 16;
  int build_threads = 0;
  int sample_count = 200000;
  int predict_count = 2048;
  std::vector<std::string> runners{"in-process", "isolated"};
  std::uint64_t seed = 1;
};

[[noreturn]] void die(const Error& e) {
  std::fprintf(stderr, "kiln-tuning-bench: %s\n", e.render().c_str());
  std::exit(1);
}

/// Stage 1: sampling alone, then sampling plus the steps of each config.
void bench_sampling(const space::SketchSpace& sp, const Options& o) {
  std::mt19937_64 rng(o.seed);
  Stopwatch clock;
  std::size_t checksum = 0;
  for (int i = 0; i < o.sample_count; ++i)
    checksum += sp.sample(rng).tiles.size();
  double sample_s = clock.lap_ms() / 1e3;
  int with_steps = o.sample_count / 4;
  for (int i = 0; i < with_steps; ++i)
    checksum += sp.steps(sp.sample(rng)).size();
  double steps_s = clock.lap_ms() / 1e3;
  fmt::print("sampling   {} configs in {:.3f} s: {:.0f} configs/s; with their steps {:.0f} "
             "configs/s (checksum {})\n",
             o.sample_count, sample_s, o.sample_count / sample_s, with_steps / steps_s, checksum);
}

/// Stage 2: features and one prediction call for `predict_count` configs.
void bench_prediction(const search::SketchSearchSpace& space, const Options& o) {
  auto model = model::XGBoostModel::load(o.model);
  if (!model) {
    fmt::print("prediction skipped: {}\n", model.error().render());
    return;
  }
  std::mt19937_64 rng(o.seed + 1);
  std::vector<search::Point> points;
  for (int i = 0; i < o.predict_count; ++i)
    points.push_back(space.sample(rng));
  // The split of the features' time: replaying the steps into a State,
  // lowering it (bound inference, no unrolling), reading the features.
  Stopwatch clock;
  std::vector<schedule::State> states;
  for (const search::Point& p : points)
    if (auto st = space.state(p))
      states.push_back(std::move(*st));
  double replay_s = clock.lap_ms() / 1e3;
  std::vector<schedule::LoweredFunc> funcs;
  for (const schedule::State& st : states)
    funcs.push_back(schedule::lower(st, {.expand_unrolled = false}));
  double lower_s = clock.lap_ms() / 1e3;
  std::vector<model::ProgramFeatures> features;
  features.reserve(points.size());
  for (const schedule::LoweredFunc& f : funcs)
    features.push_back(model::extract_features(f, model::hardware_of(codegen::host_target())));
  double extract_s = clock.lap_ms() / 1e3;
  double features_s = replay_s + lower_s + extract_s;
  std::vector<double> scores = model->predict(features);
  double predict_s = clock.lap_ms() / 1e3;
  // The checksum tells a change that makes features faster from one that
  // makes them different: it must stay the same.
  double checksum = 0;
  for (const model::ProgramFeatures& f : features)
    for (const std::vector<float>& row : f.rows)
      for (size_t c = 0; c < row.size(); ++c)
        checksum += row[c] * static_cast<double>(c % 7 + 1);
  fmt::print("prediction {} configs: features {:.3f} s (replay {:.3f}, lower {:.3f}, extract "
             "{:.3f}) + predict {:.3f} s = {:.3f} s on one thread ({:.0f} configs/s, {} scores; "
             "feature checksum {:.12g})\n",
             points.size(), features_s, replay_s, lower_s, extract_s, predict_s,
             features_s + predict_s, points.size() / (features_s + predict_s), scores.size(),
             checksum);
  // The same work as the tuner does it (SearchContext::predict: features on
  // two threads into an empty cache, then one prediction call).
  // Five times, each into a new cache: this machine's timings are noisy.
  std::vector<double> tuner_s;
  size_t tuner_scores = 0;
  for (int r = 0; r < 5; ++r) {
    std::mt19937_64 ctx_rng(o.seed);
    search::SearchContext ctx(space, *model, ctx_rng, model::hardware_of(codegen::host_target()));
    Stopwatch tuner_clock;
    tuner_scores = ctx.predict(points).size();
    tuner_s.push_back(tuner_clock.lap_ms() / 1e3);
  }
  std::sort(tuner_s.begin(), tuner_s.end());
  fmt::print("prediction {} configs as the tuner does it (features on {} threads): median {:.3f} s "
             "of 5 (min {:.3f}, max {:.3f}; {:.0f} configs/s, {} scores)\n",
             points.size(), search::SearchContext::feature_threads(), tuner_s[2], tuner_s[0],
             tuner_s[4], points.size() / tuner_s[2], tuner_scores);
}

/// The schedules of random configs that build (a config that does not is
/// refused before anything is compiled, which is not what is timed).
std::vector<schedule::State> valid_states(const search::SketchSearchSpace& space, int count,
                                          std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<schedule::State> out;
  for (int tries = 0; static_cast<int>(out.size()) < count && tries < count * 100; ++tries)
    if (auto state = space.state(space.sample(rng)))
      out.push_back(std::move(*state));
  return out;
}

struct RunFigures {
  std::string runner;
  int trials = 0, errors = 0;
  double wall_s = 0, run_s = 0, build_cpu_s = 0;
};

RunFigures bench_measurement(measure::ProgramMeasurer& measurer, const std::string& name,
                             const std::vector<schedule::State>& states, int batch_size) {
  RunFigures f{.runner = name};
  for (std::size_t begin = 0; begin < states.size(); begin += batch_size) {
    std::size_t end = std::min(states.size(), begin + batch_size);
    std::vector<const schedule::State*> batch;
    for (std::size_t i = begin; i < end; ++i)
      batch.push_back(&states[i]);
    for (const record::MeasureResult& r : measurer.measure(batch))
      f.errors += r.ok() ? 0 : 1;
  }
  const measure::MeasureStats& s = measurer.stats();
  f.trials = static_cast<int>(s.trials);
  f.wall_s = s.wall_seconds;
  f.run_s = s.run_seconds;
  f.build_cpu_s = s.build_seconds;
  return f;
}

void print_figures(const RunFigures& f, int build_threads) {
  double build_wall = std::max(0.0, f.wall_s - f.run_s);
  fmt::print("{:<11} {:>4} trials {:>3} errors  {:6.2f} s  {:5.1f} trials/s  build {:5.2f} s "
             "wall ({:3.0f}%, {:.0f} ms CPU/trial on {} threads)  run {:5.2f} s ({:3.0f}%, "
             "{:.0f} ms/trial)\n",
             f.runner, f.trials, f.errors, f.wall_s, f.trials / f.wall_s, build_wall,
             100 * build_wall / f.wall_s, 1e3 * f.build_cpu_s / f.trials, build_threads, f.run_s,
             100 * f.run_s / f.wall_s, 1e3 * f.run_s / f.trials);
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"kiln-tuning-bench: sampling, prediction and measurement speed of tuning"};
  app.add_option("--opfile", o.opfile, "op file")->capture_default_str();
  app.add_option("--set", o.sets, "parameter overrides NAME=VALUE")->capture_default_str();
  app.add_option("--model", o.model, "cost model for the prediction figure")->capture_default_str();
  app.add_option("--batches", o.batches, "batches measured per runner")->capture_default_str();
  app.add_option("--batch-size", o.batch_size, "configs per batch")->capture_default_str();
  app.add_option("--build-threads", o.build_threads, "builder threads (0: one per core)")
      ->capture_default_str();
  app.add_option("--samples", o.sample_count, "configs for the sampling figure")
      ->capture_default_str();
  app.add_option("--predict", o.predict_count, "configs for the prediction figure")
      ->capture_default_str();
  app.add_option("--runner", o.runners, "runners to time: in-process, isolated")
      ->check(CLI::IsMember({"in-process", "isolated"}))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the configs and inputs")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  ir::ParamOverrides overrides;
  for (const std::string& s : o.sets) {
    auto kv = ir::parse_override(s);
    if (!kv)
      die(kv.error());
    overrides.push_back(*kv);
  }
  auto dag = ir::parse_op_file(o.opfile, overrides);
  if (!dag)
    die(dag.error());
  Target target = codegen::host_target();
  search::SketchSearchSpace space(*dag, space::space_params(target));
  fmt::print("task: {} ({}), {} sketches; target {} ({} bits), {} cores\n", dag->name(), o.opfile,
             space.sketches().sketches().size(), target.cpu, target.vector_bits, target.cores);

  // The isolated measurer first, as when its worker was forked and had to
  // come before any thread: the order of the figures stays the same.
  std::vector<std::string> order = o.runners;
  std::stable_partition(order.begin(), order.end(),
                        [](const std::string& name) { return name == "isolated"; });
  std::vector<std::pair<std::string, std::unique_ptr<measure::ProgramMeasurer>>> measurers;
  for (const std::string& name : order) {
    measure::MeasureOptions mo;
    mo.isolate = name == "isolated";
    mo.build_threads = o.build_threads;
    mo.seed = o.seed;
    auto m = measure::ProgramMeasurer::create(*dag, target, mo);
    if (!m)
      die(m.error());
    measurers.emplace_back(name, std::move(*m));
  }

  bench_sampling(space.sketches(), o);
  bench_prediction(space, o);

  std::vector<schedule::State> states = valid_states(space, o.batches * o.batch_size, o.seed);
  int threads = o.build_threads > 0 ? o.build_threads : target.cores;
  fmt::print("measurement: {} random valid configs in batches of {}, {} builder threads\n",
             states.size(), o.batch_size, threads);
  for (auto& [name, measurer] : measurers)
    print_figures(bench_measurement(*measurer, name, states, o.batch_size), threads);
  return 0;
}
