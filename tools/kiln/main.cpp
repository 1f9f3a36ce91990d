// kiln: the command-line tool. Registration only: each subcommand lives in
// its own file (command.h); everything it does is available to a program
// linking libkiln.
#include "command.h"

#include "kiln/support/install_paths.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <vector>

using namespace kiln::tool;

/// The command line as typed, for reports.
static std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i)
    s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

int main(int argc, char** argv) {
  CLI::App app{"kiln: a JIT code-generating autotuner for tensor operators"};
  app.set_version_flag("--version", std::string("kiln ") + KILN_VERSION);
  app.require_subcommand(1);

  ToolContext ctx;
  ctx.data_dir = kiln::data_dir();
  const std::vector<Command> commands = {
      add_run_command(app, ctx),     add_dump_command(app, ctx),   add_target_command(app, ctx),
      add_space_command(app, ctx),   add_tune_command(app, ctx),   add_compare_command(app, ctx),
      add_dataset_command(app, ctx), add_train_command(app, ctx),  add_evaluate_command(app, ctx),
      add_report_command(app, ctx),  add_best_command(app, ctx),   add_replay_command(app, ctx),
      add_tasks_command(app, ctx),   add_export_command(app, ctx),
  };

  CLI11_PARSE(app, argc, argv);
  ctx.command_line = command_line(argc, argv);
  for (const Command& c : commands)
    if (c.app->parsed())
      return c.run();
  return 1; // require_subcommand(1): CLI11 has refused the line already
}
