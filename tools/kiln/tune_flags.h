// The options `kiln tune` and `kiln compare` share, and turning them into
// the library's session options.
#ifndef KILN_TOOLS_KILN_TUNE_FLAGS_H
#define KILN_TOOLS_KILN_TUNE_FLAGS_H

#include "command.h"
#include "common.h"

#include "kiln/search/session.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kiln::tool {

struct TuneFlags {
  OpOptions op;
  search::TuneOptions options;
  std::string mode = "online";
  std::string log;
  bool resume = false;
  std::string model_file;
  std::vector<std::string> transfer_logs;
  std::string save_model;
  std::string report;
  std::vector<std::string> strategy_options;
  double timeout = 10;
  double reference_timeout = 600;
  bool no_isolate = false;
  int threads = 0;
  std::string space;         ///< "sketch" or "template"; empty: sketch unless --template
  std::string template_name; ///< empty: the template that fits the op
  std::string config;        ///< TOML file of options
  /// --pipeline / --no-pipeline; unset: on in a cluster job, off alone.
  std::optional<bool> pipeline;
  /// --simulate: seconds a simulated trial takes (< 0: measure for real).
  double simulate = -1;
  /// Set by a cluster job: the measurers that spread batches over its ranks.
  measure::MeasurerFactory make_measurer;
};

void add_tune_flags(CLI::App* cmd, TuneFlags& flags);

/// Applies the --config file and the strategy options, sets the runtime's
/// threads, and gives the session's options.
Expected<search::SessionOptions> session_options(CLI::App* cmd, TuneFlags& flags,
                                                 const ToolContext& ctx);

/// Writes the HTML report of a log when `out` is not empty.
std::optional<Error> write_run_report(const std::string& log, const std::string& out,
                                      const ToolContext& ctx);

/// "template matmul (54000 configs)", or the space's name.
std::string space_text(const search::SearchSpace& space);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_TUNE_FLAGS_H
