#include "kiln/model/program_features.h"

#include "kiln/schedule/lower.h"

namespace kiln::model {

/// Features read the unrolled loops' annotation and skip their (large)
/// expansion.
static schedule::LowerOptions feature_lowering() {
  schedule::LowerOptions options;
  options.expand_unrolled = false;
  return options;
}

ProgramFeatures program_features(const schedule::State& state, const Hardware& hardware) {
  return extract_features(schedule::lower(state, feature_lowering()), hardware);
}

std::vector<ProgramFeatures> program_features(std::span<const schedule::State* const> states,
                                              const Hardware& hardware) {
  const schedule::LowerOptions options = feature_lowering();
  std::vector<schedule::LoweredFunc> funcs;
  funcs.reserve(states.size());
  for (const schedule::State* s : states)
    funcs.push_back(schedule::lower(*s, options));
  std::vector<ProgramFeatures> out;
  out.reserve(states.size());
  for (const schedule::LoweredFunc& f : funcs)
    out.push_back(extract_features(f, hardware));
  return out;
}

} // namespace kiln::model
