#include "kiln/api/backend.h"

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/target.h"
#include "kiln/export/choose_records.h"
#include "kiln/measure/nearest_pick.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/support/install_paths.h"

#include <fmt/format.h>

namespace kiln::api {

BestRecord apply_history_best(const std::vector<record::Record>& records, const ir::ComputeDAG& dag,
                              const Target& target) {
  BestRecord best;
  const std::string key = dag.workload_key();
  const record::Record* r = record::history_best(records, key, target, &best.match);
  if (!r) {
    best.description = fmt::format("no record of {}: the naive schedule", key);
    return best;
  }
  best.record = *r;
  best.description = fmt::format("trial {} of {}, {:.2f} GFLOPS on {} ({})", r->trial, r->run,
                                 r->gflops(), r->target.cpu, record::target_match_name(best.match));
  return best;
}

Kernel::Kernel(ir::ComputeDAG dag, std::unique_ptr<codegen::LoadedKernel> kernel,
               std::string source)
    : dag_(std::move(dag)), kernel_(std::move(kernel)), source_(std::move(source)) {}

Kernel::~Kernel() = default;

void Kernel::prepack(void** args) {
  kernel_->prepack(args);
  prepacked_ = true;
}

std::optional<Error> Kernel::run(void** args) {
  if (kernel_->has_prepack() && !prepacked_)
    return Error("not-prepacked",
                 fmt::format("the kernel of '{}' packs its constant inputs ahead: call prepack "
                             "once before the first run",
                             dag_.name()));
  kernel_->run(args);
  return std::nullopt;
}

Backend::Backend(const Target& target) : target_(target) {}
Backend::~Backend() = default;

Expected<std::unique_ptr<Backend>> Backend::create() {
  return create(codegen::host_target());
}

Expected<std::unique_ptr<Backend>> Backend::create(const Target& target) {
  std::unique_ptr<Backend> b(new Backend(target));
  const Target host = codegen::host_target();
  b->host_ = target.triple == host.triple && target.cpu == host.cpu;
  return b;
}

std::optional<Error> Backend::load_logs(const std::vector<std::string>& paths) {
  auto log = record::load_logs(paths);
  if (!log)
    return log.error();
  for (record::Record& r : log->records)
    records_.push_back(std::move(r));
  for (std::string& w : log->warnings)
    warnings_.push_back(std::move(w));
  log_files_.insert(log_files_.end(), paths.begin(), paths.end());
  return std::nullopt;
}

BestRecord Backend::best(const ir::ComputeDAG& dag) const {
  BestRecord best = apply_history_best(records_, dag, target_);
  if (best.record || !nearest_shape_ || !host_)
    return best;
  const std::string key = dag.workload_key();
  if (auto it = nearest_picks_.find(key); it != nearest_picks_.end())
    return it->second;
  std::string why;
  auto pick = measure::pick_nearest_shape(records_, dag, target_, measure::MeasureOptions{},
                                          measure::kNearestCandidates, &why);
  if (!pick)
    why = pick.error().message();
  if (pick && *pick) {
    best.record = (*pick)->record;
    best.match = record::TargetMatch::Exact;
    best.nearest_shape = true;
    best.description = (*pick)->description;
  } else {
    best.description = fmt::format("{} (no nearest shape: {})", best.description, why);
  }
  nearest_picks_[key] = best;
  return best;
}

Expected<std::unique_ptr<Kernel>> Backend::compile(const ir::ComputeDAG& dag) {
  BestRecord best = this->best(dag);
  return compile(dag, best.record, best.description);
}

Expected<std::unique_ptr<Kernel>> Backend::compile(const ir::ComputeDAG& dag,
                                                   const std::optional<record::Record>& record,
                                                   std::string source) {
  if (!host_)
    return Error("not-this-machine",
                 fmt::format("this backend is for {} ({}), not for the machine it runs on: "
                             "compile in-process kernels with a backend for the host, or "
                             "export object code for {} (kiln export)",
                             target_.cpu, target_.triple, target_.cpu));
  schedule::LoweredFunc func;
  if (record && record->config.program()) {
    auto state = schedule::State::replay(dag, record->config.steps);
    if (state.ok()) {
      func = schedule::lower(*state);
    } else {
      source = fmt::format("the naive schedule (the steps of {} do not apply: {})", source,
                           state.error().message());
      func = schedule::lower_naive(dag);
    }
  } else {
    func = schedule::lower_naive(dag);
  }
  if (!compiler_) {
    auto compiler = codegen::Compiler::create(target_);
    if (!compiler)
      return compiler.error();
    compiler_ = std::move(*compiler);
  }
  auto object = compiler_->compile(func);
  if (!object)
    return object.error();
  if (!jit_) {
    auto jit = codegen::Jit::create();
    if (!jit)
      return jit.error();
    jit_ = std::move(*jit);
  }
  auto loaded = jit_->load(*object);
  if (!loaded)
    return loaded.error();
  return std::unique_ptr<Kernel>(new Kernel(dag, std::move(*loaded), std::move(source)));
}

Expected<export_::ExportResult> Backend::export_kernels(const std::vector<ir::ComputeDAG>& dags,
                                                        export_::ExportOptions options,
                                                        bool allow_any_target) const {
  auto items = export_::choose_records(dags, records_, {target_, !host_, allow_any_target});
  if (!items)
    return items.error();
  options.target = target_;
  options.inputs.insert(options.inputs.end(), log_files_.begin(), log_files_.end());
  return export_::export_kernels(*items, options);
}

Expected<export_::ExportResult> Backend::export_model(const graph::Network& net,
                                                      export_::ExportOptions options,
                                                      bool allow_any_target) const {
  options.network = &net;
  std::vector<ir::ComputeDAG> dags;
  for (const graph::Task& task : net.tasks)
    dags.push_back(task.dag);
  return export_kernels(dags, std::move(options), allow_any_target);
}

search::SessionOptions Backend::tune_options(const std::string& log) const {
  search::SessionOptions options;
  options.default_model = data_dir() + "/kiln-default.model";
  options.log = log;
  return options;
}

Expected<search::SessionResult>
Backend::tune(const ir::ComputeDAG& dag, const search::SessionOptions& options,
              const std::function<void(const search::RoundStats&)>& progress) {
  auto session = search::TuningSession::create(dag, target_, options);
  if (!session)
    return session.error();
  auto result = (*session)->run(progress);
  if (!result)
    return result.error();
  for (const record::Record& r : result->tune.records)
    records_.push_back(r);
  return result;
}

} // namespace kiln::api
