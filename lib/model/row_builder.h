// Private to model: the feature row of one statement group.
#ifndef KILN_LIB_MODEL_ROW_BUILDER_H
#define KILN_LIB_MODEL_ROW_BUILDER_H

#include "feature_row.h"
#include "statement_groups.h"

namespace kiln::model::detail {

/// The features of group `g` of `groups`; `touch` counts the groups touching
/// each buffer in each loop (count_touches).
FeatureRow build_row(const Group& g, const StatementGroups& groups, const TouchCounts& touch);

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_ROW_BUILDER_H
