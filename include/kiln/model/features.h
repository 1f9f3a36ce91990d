// Program features for the cost model, extracted from the lowered loop nest:
// one row per innermost statement (buffer store), in the groups Ansor uses so
// that they mean the same across ops and shapes. docs/features.md lists
// every column.
#ifndef KILN_MODEL_FEATURES_H
#define KILN_MODEL_FEATURES_H

#include "kiln/model/hardware.h"
#include "kiln/schedule/loop_nest.h"

#include <string>
#include <vector>

namespace kiln::model {

/// Bumped whenever a column changes meaning; saved models record it.
inline constexpr int kFeatureVersion = 3;

/// The features of one program: one row per store statement, every row
/// feature_count() long.
struct ProgramFeatures {
  std::vector<std::vector<float>> rows;
};

/// The number of columns of a row.
int feature_count();
/// The name of every column, in order (e.g. "float_mad", "vec_len_inner").
const std::vector<std::string>& feature_names();

/// The rows of a lowered kernel, in statement order. Meant for the nest of
/// `schedule::lower(state, {.expand_unrolled = false})`, whose unrolled loops
/// are still loops; in an expanded nest the unrolled copies of a statement
/// are merged back into one row. A nest without stores has no rows. Every
/// row ends with the columns of the machine it runs on.
ProgramFeatures extract_features(const schedule::LoweredFunc& func, const Hardware& hardware);

} // namespace kiln::model

#endif
