// Program features (Ansor's groups) from the lowered loop nest, in two
// phases: group the store statements, merging the unrolled copies of each
// (statement_groups.h), then build one row per group (row_builder.h) and lay
// it out in columns (feature_row.h). docs/features.md lists every column with
// its formula.
#include "kiln/model/features.h"

#include "feature_row.h"
#include "row_builder.h"
#include "statement_groups.h"

namespace kiln::model {

int feature_count() {
  return static_cast<int>(feature_names().size());
}

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = detail::column_names();
  return names;
}

ProgramFeatures extract_features(const schedule::LoweredFunc& func, const Hardware& hardware) {
  const detail::StatementGroups groups = detail::group_statements(func);
  const detail::TouchCounts touch = detail::count_touches(groups.groups);
  ProgramFeatures out;
  out.rows.reserve(groups.groups.size());
  const double lanes = hardware.vector_bits / 32;
  for (const detail::Group& g : groups.groups) {
    detail::FeatureRow row = detail::build_row(g, groups, touch);
    row.hw = {hardware.vector_bits,
              hardware.fma_flops,
              hardware.cores,
              hardware.l1d_kib,
              hardware.l2_kib,
              hardware.l3_kib,
              lanes > 0 ? row.vec.len_inner / lanes : 0};
    out.rows.push_back(detail::to_columns(row));
  }
  return out;
}

} // namespace kiln::model
