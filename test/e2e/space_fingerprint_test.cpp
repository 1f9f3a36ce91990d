// The search spaces and the features they feed the model, pinned: for every
// op in ops/, the sketches, the steps of seeded samples, mutations and
// neighbours, the features of those programs, and every template's space.
// A change of any of them changes what a seed tunes and what a trained model
// means, so it must be deliberate: update the expected values here and say
// why in the commit. Set KILN_PRINT_FINGERPRINT=1 to print the current ones.
#include "kiln/ir/parser.h"
#include "kiln/model/features.h"
#include "kiln/schedule/lower.h"
#include "kiln/space/sketch.h"
#include "kiln/space/templates.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <random>

using namespace kiln;

namespace {

/// FNV-1a over bytes, folded in call by call.
struct Fnv {
  std::uint64_t h = 14695981039346656037ULL;
  void add(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      h ^= p[i];
      h *= 1099511628211ULL;
    }
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\n", 1);
  }
};

/// The machine the features describe: fixed, so that the fingerprint is the
/// same on every host.
const model::Hardware kMachine =
    model::hardware_of(kiln::Target{"x86_64-pc-linux-gnu", "znver4", "", 512, 2});

struct Fingerprint {
  std::size_t sketches = 0;
  std::uint64_t names = 0, steps = 0, features = 0, templates = 0;
  std::size_t neighbours = 0;
};

Fingerprint fingerprint(const std::string& op) {
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + op + ".kop");
  REQUIRE(dag.ok());
  const space::SpaceParams params{16, 2, 64};
  space::SketchSpace sp(*dag, params);
  Fingerprint f;
  f.sketches = sp.sketches().size();
  Fnv names, steps, features, templates;
  for (const space::Sketch& sk : sp.sketches())
    names.add(sk.name());
  std::mt19937_64 rng(1);
  for (int i = 0; i < 24; ++i) {
    space::SketchConfig c = sp.sample(rng);
    space::SketchConfig m = sp.mutate(c, rng);
    for (const space::SketchConfig* x : {&c, &m}) {
      steps.add(schedule::steps_to_json(sp.steps(*x)));
      auto state = sp.state(*x);
      REQUIRE(state.ok());
      model::ProgramFeatures pf =
          model::extract_features(schedule::lower(*state, {.expand_unrolled = false}), kMachine);
      for (const auto& row : pf.rows)
        features.add(row.data(), row.size() * sizeof(float));
    }
    if (i == 0)
      for (const auto& [decision, n] : sp.neighbours(c)) {
        ++f.neighbours;
        steps.add(fmt::format("{}:{}", decision, schedule::steps_to_json(sp.steps(n))));
      }
  }
  for (const space::TemplateInfo& info : space::templates()) {
    auto t = space::make_template(info.name, *dag, params);
    if (!t)
      continue;
    const space::ConfigSpace& cs = (*t)->space();
    templates.add(fmt::format("{} {}", info.name, cs.size() ? *cs.size() : 0));
    std::mt19937_64 trng(1);
    for (int i = 0; i < 8; ++i)
      templates.add(schedule::steps_to_json((*t)->steps(cs.sample(trng))));
  }
  f.names = names.h;
  f.steps = steps.h;
  f.features = features.h;
  f.templates = templates.h;
  return f;
}

} // namespace

TEST_CASE("the sketch spaces, their samples and their features are unchanged", "[space][model]") {
  // op -> sketches, neighbours of the first sample, hashes of the sketch
  // names, of the sampled, mutated and neighbouring steps, of their
  // features, and of the template spaces.
  struct Expected {
    const char* op;
    Fingerprint f;
  };
  const Expected expected[] = {
#include "space_fingerprint.inc"
  };
  const bool print = std::getenv("KILN_PRINT_FINGERPRINT") != nullptr;
  for (const Expected& e : expected) {
    Fingerprint f = fingerprint(e.op);
    if (print)
      fmt::print("    {{\"{}\", {{{}, {:#x}, {:#x}, {:#x}, {:#x}, {}}}}},\n", e.op, f.sketches,
                 f.names, f.steps, f.features, f.templates, f.neighbours);
    INFO(e.op);
    CHECK(f.sketches == e.f.sketches);
    CHECK(f.names == e.f.names);
    CHECK(f.steps == e.f.steps);
    CHECK(f.features == e.f.features);
    CHECK(f.templates == e.f.templates);
    CHECK(f.neighbours == e.f.neighbours);
  }
}
