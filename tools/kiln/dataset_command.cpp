// kiln dataset: measure random configs of every op in a folder.
#include "command.h"
#include "common.h"

#include "kiln/codegen/target.h"
#include "kiln/search/dataset.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

namespace kiln::tool {

namespace {
struct DatasetFlags {
  std::string dir;
  std::string out = "dataset.jsonl";
  search::DatasetOptions options;
};
} // namespace

static int run(const DatasetFlags& f) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(f.dir))
    if (e.path().extension() == ".kop")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty())
    return fail(Error("no-ops", fmt::format("no .kop files in '{}'", f.dir)));
  std::vector<record::Record> existing;
  if (std::filesystem::exists(f.out)) {
    auto log = load_logs_verbose({f.out});
    if (!log)
      return fail(log.error());
    existing = std::move(log->records);
    fmt::print("resuming: {} records already in {}\n", existing.size(), f.out);
  }
  auto writer = record::LogWriter::open(f.out);
  if (!writer)
    return fail(writer.error());
  auto err =
      search::collect_dataset(files, codegen::host_target(), f.options, existing, **writer,
                              [](const search::DatasetProgress& p) {
                                fmt::print("task {}/{} {}: {} measured, {} already in the "
                                           "log\n",
                                           p.task_index, p.tasks, p.task, p.measured, p.skipped);
                                std::fflush(stdout);
                              });
  if (err)
    return fail(*err);
  fmt::print("dataset written to {}\n", f.out);
  return 0;
}

Command add_dataset_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<DatasetFlags>();
  measure::RunnerOptions& runner = f->options.measure.runner;
  CLI::App* cmd = app.add_subcommand("dataset", "measure random configs of every op in a folder");
  cmd->add_option("opdir", f->dir, "folder of .kop files")->required();
  cmd->add_option("--samples", f->options.samples, "random configs per task")
      ->capture_default_str();
  cmd->add_option("--seed", f->options.seed, "random seed")->capture_default_str();
  cmd->add_option("-o,--output", f->out, "the log to write (resumed if it exists)")
      ->capture_default_str();
  cmd->add_option("--timeout", runner.timeout_seconds, "seconds per candidate")
      ->capture_default_str();
  add_timing_options(cmd, runner.timing, "timed repeats; the label is their median");
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
