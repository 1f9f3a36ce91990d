// What several subcommands share: reading an op file with its overrides
// and schedule, reporting an error, reading logs with their warnings.
#ifndef KILN_TOOLS_KILN_COMMON_H
#define KILN_TOOLS_KILN_COMMON_H

#include "kiln/ir/compute_dag.h"
#include "kiln/measure/timer.h"
#include "kiln/model/sample.h"
#include "kiln/record/tuning_log.h"
#include "kiln/schedule/loop_nest.h"
#include "kiln/support/error.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kiln::tool {

/// Options of every command that reads an op file.
struct OpOptions {
  std::string file;
  std::vector<std::string> sets;
  std::string schedule; ///< schedule file; empty for the naive schedule
};

/// `schedule_help`: what --schedule means to the command; empty: the
/// command takes no schedule.
void add_op_options(CLI::App* cmd, OpOptions& op,
                    const std::string& schedule_help =
                        "schedule file (JSON steps, docs/schedule-format.md); default: naive");

/// --repeat and --min-repeat-ms, for the commands that time kernels.
void add_timing_options(CLI::App* cmd, measure::TimingOptions& timing,
                        const std::string& repeat_help);

/// Prints the error (rendered, with its source line) to stderr; returns 1.
int fail(const Error& e);

/// The op file's DAG with the --set overrides applied.
Expected<ir::ComputeDAG> load_op(const OpOptions& op);
/// The op's loop nest under the chosen schedule.
Expected<schedule::LoweredFunc> lower_op(const ir::ComputeDAG& dag, const OpOptions& op);

/// "M=512 N=512 K=512".
std::string params_text(const ir::ComputeDAG& dag);
/// `word` as one shell word: unchanged when it is plain, else single-quoted.
std::string shell_quote(const std::string& word);
/// The op file and its --set flags, as the user would type them again
/// (shell-quoted).
std::string op_command(const OpOptions& op);

/// Loads logs, printing a warning for every skipped line.
Expected<record::LoadedLog> load_logs_verbose(const std::vector<std::string>& paths);

/// Training samples of records, printing a warning for every record that
/// gives none; an Error when none does.
Expected<std::vector<model::Sample>> samples_of(const std::vector<record::Record>& records);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_COMMON_H
