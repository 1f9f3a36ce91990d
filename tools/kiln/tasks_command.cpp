// kiln tasks: a model's fused tasks, and each as an op file.
#include "command.h"
#include "common.h"
#include "output.h"

#include "kiln/graph/network.h"
#include "kiln/graph/onnx_import.h"
#include "kiln/ir/printer.h"
#include "kiln/support/output_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <memory>

namespace kiln::tool {

namespace {
struct TasksFlags {
  std::string model;
  std::string write_ops;
};
} // namespace

/// Writes each task as DIR/<key>.kop with a comment naming where it comes from.
static std::optional<Error> write_op_files(const graph::Network& net, const std::string& model,
                                           const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return Error("cannot-write", fmt::format("cannot create the folder '{}' for --write-ops: {}",
                                             dir, ec.message()));
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    const graph::Task& task = net.tasks[t];
    const std::string path = (std::filesystem::path(dir) / (task.key + ".kop")).string();
    if (auto e = check_output_file(path, {model}, "the op file"))
      return e;
    std::ofstream out(path);
    out << fmt::format("# task {} of {} (weight {}: the model computes it {} times): {}\n", t,
                       std::filesystem::path(model).filename().string(), task.weight(),
                       task.weight(), task.ops)
        << ir::to_string(task.dag);
    out.close();
    if (!out)
      return Error("cannot-write", fmt::format("cannot write '{}'", path));
  }
  return std::nullopt;
}

static int run(const TasksFlags& f) {
  auto net = graph::load_network(f.model);
  if (!net)
    return fail(net.error());
  fmt::print("{}", task_table(*net, f.model));
  if (!f.write_ops.empty()) {
    if (auto e = write_op_files(*net, f.model, f.write_ops))
      return fail(*e);
    fmt::print("wrote {} op files to {}\n", net->tasks.size(), f.write_ops);
  }
  return 0;
}

Command add_tasks_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<TasksFlags>();
  CLI::App* cmd = app.add_subcommand("tasks", "split an ONNX model into fused tasks and list them");
  cmd->add_option("model", f->model, "the ONNX model (.onnx)")->required();
  cmd->add_option("--write-ops", f->write_ops,
                  "write each task as DIR/<key>.kop, to tune, run or dump it on its own");
  cmd->footer(fmt::format("Supported ONNX ops: {}.", graph::supported_onnx_ops()));
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
