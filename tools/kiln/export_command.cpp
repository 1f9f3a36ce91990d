// kiln export: tuned kernels out of kiln, as object code, a C header and a
// static archive with the runtime (docs/library.md, "Export").
#include "command.h"
#include "common.h"

#include "kiln/codegen/target.h"
#include "kiln/export/choose_records.h"
#include "kiln/export/export.h"
#include "kiln/graph/network.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace kiln::tool {

namespace {
struct ExportFlags {
  std::vector<std::string> logs;
  std::string ops_dir, model;
  std::vector<std::string> tasks;
  std::string out, name = "kiln_kernels";
  std::string triple, cpu;
  bool allow_any_target = false;
  bool shared = false;
};
} // namespace

/// The tasks to export: the op files', the model's, or the logs'.
static Expected<std::vector<ir::ComputeDAG>> tasks_of(const ExportFlags& f,
                                                      const graph::Network* net,
                                                      const std::vector<record::Record>& records) {
  if (!f.ops_dir.empty())
    return export_::tasks_of_op_folder(f.ops_dir);
  if (net) {
    std::vector<ir::ComputeDAG> dags;
    for (const graph::Task& task : net->tasks)
      dags.push_back(task.dag);
    return dags;
  }
  return export_::tasks_of_records(records);
}

static std::string record_text(const export_::ExportedKernel& k) {
  if (!k.from_record)
    return "naive";
  return fmt::format("trial {}, {:.2f} GFLOPS, {}", k.trial, k.gflops, k.record_cpu);
}

static int run(const ExportFlags& f) {
  if (f.logs.empty() && f.ops_dir.empty() && f.model.empty())
    return fail(Error("no-tasks", "give tuning logs to export their tasks' best kernels, or "
                                  "--ops DIR / --model MODEL (then tasks without records are "
                                  "exported with the naive schedule)"));
  const bool named = !f.triple.empty() || !f.cpu.empty();
  Target target = codegen::host_target();
  if (named) {
    auto t = codegen::named_target(f.triple.empty() ? target.triple : f.triple,
                                   f.cpu.empty() ? "generic" : f.cpu);
    if (!t)
      return fail(t.error());
    target = *t;
  }
  std::vector<record::Record> records;
  if (!f.logs.empty()) {
    auto log = load_logs_verbose(f.logs);
    if (!log)
      return fail(log.error());
    records = std::move(log->records);
  }
  std::optional<graph::Network> net;
  if (!f.model.empty()) {
    auto loaded = graph::load_network(f.model);
    if (!loaded)
      return fail(loaded.error());
    net = std::move(*loaded);
  }
  auto tasks = tasks_of(f, net ? &*net : nullptr, records);
  if (!tasks)
    return fail(tasks.error());
  if (!f.tasks.empty()) {
    for (const std::string& key : f.tasks)
      if (std::none_of(tasks->begin(), tasks->end(),
                       [&](const ir::ComputeDAG& d) { return d.workload_key() == key; }))
        return fail(Error("no-such-task", fmt::format("--task {}: no such task among those to "
                                                      "export; `kiln best` lists a log's tasks",
                                                      key)));
    std::erase_if(*tasks, [&](const ir::ComputeDAG& d) {
      return std::find(f.tasks.begin(), f.tasks.end(), d.workload_key()) == f.tasks.end();
    });
  }
  if (tasks->empty())
    return fail(Error("no-tasks", "the logs hold no task to export"));
  auto items = export_::choose_records(*tasks, records, {target, named, f.allow_any_target});
  if (!items)
    return fail(items.error());

  export_::ExportOptions options;
  options.out_dir = f.out;
  options.name = f.name;
  options.target = target;
  options.shared = f.shared;
  options.inputs = f.logs;
  if (!f.ops_dir.empty())
    options.inputs.push_back(f.ops_dir);
  if (!f.model.empty())
    options.inputs.push_back(f.model);
  // The whole-model function calls every task's kernel.
  if (net && f.tasks.empty()) {
    options.network = &*net;
    options.model_file = f.model;
  }
  auto result = export_::export_kernels(*items, options);
  if (!result)
    return fail(result.error());

  fmt::print("target:   {} {}, {} bits\n", target.triple, target.cpu, target.vector_bits);
  std::size_t width = 6;
  for (const export_::ExportedKernel& k : result->kernels)
    width = std::max(width, k.symbol.size());
  fmt::print("{:<{}}  {:<16} {:<30} {:<36} {}\n", "symbol", width, "op", "workload key", "record",
             "match");
  for (const export_::ExportedKernel& k : result->kernels)
    fmt::print("{:<{}}  {:<16} {:<30} {:<36} {}\n", k.symbol, width, k.op_name, k.workload_key,
               record_text(k), k.from_record ? record::target_match_name(k.match) : "-");
  for (const export_::ExportedKernel& k : result->kernels)
    if (!k.note.empty() && (k.from_record ? k.match != record::TargetMatch::Exact : true))
      fmt::print("note: {}: {}\n", k.symbol, k.note);
  fmt::print("wrote {} files to {}: {} kernel object{}, {}, {}{}\n", result->files.size(), f.out,
             result->kernels.size(), result->kernels.size() == 1 ? "" : "s", result->header,
             result->archive, result->shared_library.empty() ? "" : ", " + result->shared_library);
  if (result->model)
    fmt::print("model:    {0}_create, {0}_run, {0}_destroy in {1}: {2} kernel calls, weights "
               "{3:.1f} MB, state {4:.1f} MB (activations {5:.1f}, packed weights {6:.1f})\n",
               f.name, result->model->object_file, result->model->calls,
               static_cast<double>(result->model->weights_bytes) / 1e6,
               static_cast<double>(result->model->activation_bytes + result->model->packed_bytes) /
                   1e6,
               static_cast<double>(result->model->activation_bytes) / 1e6,
               static_cast<double>(result->model->packed_bytes) / 1e6);
  else if (net)
    fmt::print("note:     no whole-model function: --task exports only some of the model's "
               "kernels\n");
  if (result->runtime_source.empty())
    fmt::print("link:     cc app.c -I{0} -L{0} -l{1} {2}\n", f.out, f.name, result->link_flags);
  else
    fmt::print("runtime:  {} is not in the archive: compile it for {} with the target's C "
               "compiler (C11, -O2 -c) and link it with lib{}.a {}\n",
               result->runtime_source, target.triple, f.name, result->link_flags);
  return 0;
}

Command add_export_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<ExportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write tuned kernels as object code, a C header and a static archive");
  cmd->add_option("logs", f->logs, "tuning logs (JSON lines): each task's best record");
  auto* ops = cmd->add_option("--ops", f->ops_dir,
                              "export the op files (*.kop) of this folder (a task without a "
                              "record gets the naive schedule)");
  auto* model = cmd->add_option("--model", f->model,
                                "export every task of this ONNX model (a task without a record "
                                "gets the naive schedule) and NAME_run, which runs the whole "
                                "model");
  ops->excludes(model);
  cmd->add_option("--task", f->tasks, "only this workload key (repeatable)");
  cmd->add_option("-o,--out", f->out, "the folder to write (created if missing)")->required();
  cmd->add_option("--name", f->name, "NAME of libNAME.a and NAME.h")->capture_default_str();
  cmd->add_option("--target", f->triple,
                  "compile for this LLVM triple (records must then be of --mcpu or its family)");
  cmd->add_option("--mcpu", f->cpu, "compile for this CPU (default with --target: generic)");
  cmd->add_flag("--allow-any-target", f->allow_any_target,
                "with --target/--mcpu: take a task's best record even when it was measured on "
                "another kind of machine");
  cmd->add_flag("--shared", f->shared, "also link libNAME.so with the system's cc (host only)");
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
