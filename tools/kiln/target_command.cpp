// kiln target: the machine kernels are compiled for.
#include "command.h"
#include "common.h"
#include "output.h"

#include "kiln/codegen/target.h"

#include <fmt/format.h>

#include <memory>

namespace kiln::tool {

namespace {
struct TargetFlags {
  std::string triple, cpu;
};
} // namespace

static int run(const TargetFlags& f) {
  if (f.triple.empty() && f.cpu.empty()) {
    fmt::print("{}", describe_target(codegen::host_target()));
    return 0;
  }
  auto target = codegen::named_target(f.triple.empty() ? codegen::host_target().triple : f.triple,
                                      f.cpu.empty() ? "generic" : f.cpu);
  if (!target)
    return fail(target.error());
  fmt::print("{}", describe_target(*target));
  return 0;
}

Command add_target_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<TargetFlags>();
  CLI::App* cmd = app.add_subcommand("target", "show the machine kernels are compiled for");
  cmd->add_option("--target", f->triple, "an LLVM triple instead of the host's");
  cmd->add_option("--mcpu", f->cpu, "a CPU name instead of the host's");
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
