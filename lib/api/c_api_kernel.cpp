// The C API (kiln/kiln.h): apply history best, tuning, and kernels.
#include "c_handles.h"

#include "kiln/search/tuner.h"

#include <fmt/format.h>

#include <cstdio>

using kiln::Error;
using kiln::capi::fail;
using kiln::capi::fail_argument;
using kiln::capi::guarded;

extern "C" {

static kiln_match c_match(const kiln::api::BestRecord& best) {
  if (!best.record)
    return KILN_MATCH_NONE;
  if (best.nearest_shape)
    return KILN_MATCH_NEAREST_SHAPE;
  switch (best.match) {
  case kiln::record::TargetMatch::Exact:
    return KILN_MATCH_SAME_CPU;
  case kiln::record::TargetMatch::SameFamily:
    return KILN_MATCH_SAME_FAMILY;
  case kiln::record::TargetMatch::Any:
    return KILN_MATCH_ANY_CPU;
  }
  return KILN_MATCH_ANY_CPU;
}

kiln_status kiln_backend_best(kiln_backend* backend, const kiln_op* op, kiln_best* out) {
  if (!backend || !op || !out)
    return fail_argument("kiln_backend_best: a NULL argument");
  return guarded(KILN_ERROR_INTERNAL, [&] {
    kiln::api::BestRecord best = backend->impl->best(op->dag);
    backend->best_description = best.description;
    *out = kiln_best{};
    out->match = c_match(best);
    out->trial = best.record ? best.record->trial : -1;
    out->seconds = best.record ? best.record->result.median() : -1;
    out->gflops = best.record ? best.record->gflops() : 0;
    out->description = backend->best_description.c_str();
    return KILN_OK;
  });
}

void kiln_tune_options_init(kiln_tune_options* options) {
  if (!options)
    return;
  const kiln::search::TuneOptions defaults;
  *options = kiln_tune_options{};
  options->size = sizeof(kiln_tune_options);
  options->mode = "online";
  options->trials = defaults.trials;
  options->seed = defaults.seed;
  options->isolate = 1;
}

kiln_status kiln_tune(kiln_backend* backend, const kiln_op* op, const kiln_tune_options* options,
                      kiln_tune_result* out) {
  if (!backend || !op || !options || !out)
    return fail_argument("kiln_tune: a NULL argument");
  if (options->size != sizeof(kiln_tune_options))
    return fail_argument("kiln_tune: options.size is not sizeof(kiln_tune_options): fill the "
                         "options with kiln_tune_options_init first");
  if (!options->log || !*options->log)
    return fail_argument("kiln_tune: options.log is empty: name the tuning log to append to");
  return guarded(KILN_ERROR_TUNE, [&] {
    kiln::search::SessionOptions s = backend->impl->tune_options(options->log);
    auto mode = kiln::search::parse_mode(options->mode ? options->mode : "online");
    if (!mode)
      return fail(KILN_ERROR_ARGUMENT,
                  Error("bad-option", fmt::format("kiln_tune: unknown mode '{}'; the modes are "
                                                  "online, offline, hybrid",
                                                  options->mode)));
    s.tune.mode = *mode;
    s.tune.trials = options->trials;
    s.tune.seed = options->seed;
    s.tune.time_budget_seconds = options->time_budget_seconds;
    s.tune.early_stop = options->early_stop;
    s.resume = options->resume != 0;
    s.measure.isolate = options->isolate != 0;
    if (options->model_file)
      s.model_file = options->model_file;
    s.source = op->dag.name();
    std::function<void(const kiln::search::RoundStats&)> progress;
    if (options->verbose)
      progress = [](const kiln::search::RoundStats& r) {
        std::fprintf(stderr, "kiln: round %d, %lld trials, best %.2f GFLOPS\n", r.round,
                     static_cast<long long>(r.trials), r.best_gflops);
      };
    auto result = backend->impl->tune(op->dag, s, progress);
    if (!result)
      return fail(result.error().id() == "bad-option" ? KILN_ERROR_ARGUMENT : KILN_ERROR_TUNE,
                  result.error());
    *out = kiln_tune_result{};
    out->trials = result->tune.trials;
    const auto& best = result->tune.best;
    out->best_seconds = best && best->result.ok() ? best->result.median() : -1;
    out->best_gflops = best ? best->gflops() : 0;
    const auto& naive = result->tune.naive;
    out->naive_seconds = naive && naive->result.ok() ? naive->result.median() : -1;
    return KILN_OK;
  });
}

kiln_status kiln_kernel_compile(kiln_backend* backend, const kiln_op* op, kiln_kernel** out) {
  if (!backend || !op || !out)
    return fail_argument("kiln_kernel_compile: a NULL argument");
  *out = nullptr;
  return guarded(KILN_ERROR_COMPILE, [&] {
    auto kernel = backend->impl->compile(op->dag);
    if (!kernel)
      return fail(KILN_ERROR_COMPILE, kernel.error());
    auto handle = std::make_unique<kiln_kernel>();
    handle->impl = std::move(*kernel);
    *out = handle.release();
    return KILN_OK;
  });
}

void kiln_kernel_destroy(kiln_kernel* kernel) {
  delete kernel;
}

const char* kiln_kernel_source(const kiln_kernel* kernel) {
  return kernel ? kernel->impl->source().c_str() : "";
}

kiln_status kiln_kernel_prepack(kiln_kernel* kernel, void* const* args) {
  if (!kernel || !args)
    return fail_argument("kiln_kernel_prepack: a NULL argument");
  kiln::capi::clear_error();
  kernel->impl->prepack(const_cast<void**>(args));
  return KILN_OK;
}

kiln_status kiln_kernel_run(kiln_kernel* kernel, void* const* args) {
  if (!kernel || !args)
    return fail_argument("kiln_kernel_run: a NULL argument");
  kiln::capi::clear_error();
  if (auto err = kernel->impl->run(const_cast<void**>(args)))
    return fail(KILN_ERROR_ARGUMENT, *err);
  return KILN_OK;
}

} // extern "C"
