// The one way from a schedule to the features the cost model scores: lower
// the State with its unrolled loops kept as loops, then read the loop nest
// (features.h). The search, the tuner and training data all go through it.
#ifndef KILN_MODEL_PROGRAM_FEATURES_H
#define KILN_MODEL_PROGRAM_FEATURES_H

#include "kiln/model/features.h"
#include "kiln/schedule/state.h"

#include <span>
#include <vector>

namespace kiln::model {

ProgramFeatures program_features(const schedule::State& state, const Hardware& hardware);

/// program_features of several states, stage by stage: all lowered, then
/// all read. Over a few dozen programs this is a third faster than one at a
/// time, as each stage's code and data stay in cache.
std::vector<ProgramFeatures> program_features(std::span<const schedule::State* const> states,
                                              const Hardware& hardware);

} // namespace kiln::model

#endif // KILN_MODEL_PROGRAM_FEATURES_H
