// kiln dump: the operator at one stage of compilation.
#include "command.h"
#include "common.h"

#include "kiln/codegen/compiler.h"
#include "kiln/codegen/target.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <memory>

namespace kiln::tool {

namespace {
struct DumpFlags {
  OpOptions op;
  std::string stage = "loopnest";
  std::string out;
};
} // namespace

/// The loop nest after each lowering pass, headed by the pass's name.
static Expected<std::string> passes_text(const ir::ComputeDAG& dag, const OpOptions& op) {
  auto state = op.schedule.empty() ? Expected<schedule::State>(schedule::State(dag))
                                   : schedule::State::load(dag, op.schedule);
  if (!state)
    return state.error();
  std::string text;
  schedule::LowerOptions options;
  options.trace = [&](std::string_view pass, const schedule::Stmt& nest) {
    text += fmt::format("// after {}\n{}\n", pass, schedule::to_string(nest, 0));
  };
  schedule::lower(*state, options);
  return text;
}

static Expected<std::string> dump_text(const DumpFlags& f) {
  auto dag = load_op(f.op);
  if (!dag)
    return dag.error();
  if (f.stage == "dag")
    return dag->to_string();
  if (f.stage == "passes")
    return passes_text(*dag, f.op);
  auto lowered = lower_op(*dag, f.op);
  if (!lowered)
    return lowered.error();
  if (f.stage == "loopnest")
    return schedule::to_string(*lowered);
  auto compiler = codegen::Compiler::create(codegen::host_target());
  if (!compiler)
    return compiler.error();
  codegen::DumpStage which = f.stage == "llvm"  ? codegen::DumpStage::LLVM
                             : f.stage == "opt" ? codegen::DumpStage::Optimized
                                                : codegen::DumpStage::Assembly;
  return (*compiler)->dump(*lowered, which);
}

static int run(const DumpFlags& f) {
  auto text = dump_text(f);
  if (!text)
    return fail(text.error());
  if (f.out.empty() || f.out == "-") {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }
  std::ofstream file(f.out);
  file << *text;
  file.close();
  if (!file)
    return fail(Error("cannot-write", fmt::format("cannot write '{}'; check the directory exists "
                                                  "and is writable",
                                                  f.out)));
  return 0;
}

Command add_dump_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<DumpFlags>();
  CLI::App* cmd = app.add_subcommand("dump", "show the operator at one stage of compilation");
  add_op_options(cmd, f->op);
  cmd->add_option("--stage", f->stage,
                  "what to show (passes: the loop nest after each lowering pass)")
      ->check(CLI::IsMember({"dag", "loopnest", "passes", "llvm", "opt", "asm"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", f->out, "write to a file instead of standard output");
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
