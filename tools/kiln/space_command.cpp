// kiln space: an operator's search space (sketches, or a template's knobs).
#include "command.h"
#include "common.h"

#include "kiln/codegen/target.h"
#include "kiln/search/search_space.h"
#include "kiln/space/sketch.h"
#include "kiln/space/templates.h"

#include <fmt/format.h>

#include <memory>
#include <random>

namespace kiln::tool {

namespace {
struct SpaceFlags {
  OpOptions op;
  bool sketches = false;
  int samples = 0;
  std::uint64_t seed = 1;
  std::string template_name;
  bool size = false;
};
} // namespace

/// `kiln space --template NAME`: the template's knobs, its size, or sampled
/// configs.
static int template_space(const ir::ComputeDAG& dag, const SpaceFlags& f) {
  auto t = space::make_template(f.template_name, dag, space::space_params(codegen::host_target()));
  if (!t)
    return fail(t.error());
  const space::ConfigSpace& sp = (*t)->space();
  auto n = sp.size();
  std::string count = n ? std::to_string(*n) : std::string("more than 2^64");
  if (f.size) {
    fmt::print("{}\n", count);
    return 0;
  }
  if (f.samples <= 0) {
    fmt::print("template {} for {}: {} configs, {} knobs\n{}", f.template_name, dag.name(), count,
               sp.knobs().size(), sp.describe());
    return 0;
  }
  std::mt19937_64 rng(f.seed);
  for (int i = 0; i < f.samples; ++i) {
    space::KnobConfig c = sp.sample(rng);
    fmt::print("config {} (index {}): {}\n  {}\n", i, sp.index_of(c), sp.describe(c),
               schedule::steps_to_json((*t)->steps(c)));
  }
  return 0;
}

static int run(const SpaceFlags& f) {
  auto dag = load_op(f.op);
  if (!dag)
    return fail(dag.error());
  if (!f.template_name.empty())
    return template_space(*dag, f);
  if (f.size)
    return fail(Error("bad-option", "--size counts a template's space: add --template NAME "
                                    "(the sketch space is sampled, not enumerated)"));
  space::SketchSpace sp(*dag, space::space_params(codegen::host_target()));
  if (f.sketches || f.samples <= 0) {
    fmt::print("{} sketches for {}\n\n{}", sp.sketches().size(), dag->name(), sp.describe());
    if (f.samples <= 0)
      return 0;
  }
  std::mt19937_64 rng(f.seed);
  for (int i = 0; i < f.samples; ++i) {
    space::SketchConfig c = sp.sample(rng);
    fmt::print("config {} (sketch {}): {}\n", i, c.sketch, schedule::steps_to_json(sp.steps(c)));
  }
  return 0;
}

Command add_space_command(CLI::App& app, const ToolContext&) {
  auto f = std::make_shared<SpaceFlags>();
  CLI::App* cmd = app.add_subcommand("space", "show an operator's search space");
  add_op_options(cmd, f->op, "");
  cmd->add_flag("--sketches", f->sketches, "print the sketches as loop nests");
  cmd->add_option("--sample", f->samples, "print N random configs (as steps)");
  cmd->add_option("--seed", f->seed, "random seed")->capture_default_str();
  cmd->add_option("--template", f->template_name,
                  "a template's space instead (matmul, dense, conv2d_nchw): its knobs, or "
                  "with --sample N configs");
  cmd->add_flag("--size", f->size, "with --template: print the number of configs");
  return {cmd, [f] { return run(*f); }};
}

} // namespace kiln::tool
