// The subcommands of the kiln tool. Each file registers one: its options
// on a CLI11 subcommand, and what runs when the user named it. The tool is
// thin: parsing options and printing results; the work is the library's.
#ifndef KILN_TOOLS_KILN_COMMAND_H
#define KILN_TOOLS_KILN_COMMAND_H

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace kiln::tool {

/// What every command may need besides its own options.
struct ToolContext {
  std::string command_line; ///< as typed, for reports; set after parsing
  std::string data_dir;     ///< the shipped model and datasets
};

/// A registered subcommand: run() is called when the user named it, after
/// the command line was parsed; it returns the exit status.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_run_command(CLI::App& app, const ToolContext& ctx);
Command add_dump_command(CLI::App& app, const ToolContext& ctx);
Command add_target_command(CLI::App& app, const ToolContext& ctx);
Command add_space_command(CLI::App& app, const ToolContext& ctx);
Command add_tune_command(CLI::App& app, const ToolContext& ctx);
Command add_compare_command(CLI::App& app, const ToolContext& ctx);
Command add_dataset_command(CLI::App& app, const ToolContext& ctx);
Command add_train_command(CLI::App& app, const ToolContext& ctx);
Command add_evaluate_command(CLI::App& app, const ToolContext& ctx);
Command add_report_command(CLI::App& app, const ToolContext& ctx);
Command add_best_command(CLI::App& app, const ToolContext& ctx);
Command add_replay_command(CLI::App& app, const ToolContext& ctx);
Command add_tasks_command(CLI::App& app, const ToolContext& ctx);
Command add_export_command(CLI::App& app, const ToolContext& ctx);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_COMMAND_H
