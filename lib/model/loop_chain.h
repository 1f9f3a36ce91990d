// Private to model: the loops around a statement as its row sees them.
#ifndef KILN_LIB_MODEL_LOOP_CHAIN_H
#define KILN_LIB_MODEL_LOOP_CHAIN_H

#include "statement_groups.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::model::detail {

/// A loop of a row's nest; the virtual one stands for the unrolled copies.
struct ChainLoop {
  const std::string* var = nullptr; ///< nullptr for the virtual loop
  std::int64_t extent = 1;
  schedule::ForKind kind = schedule::ForKind::Serial;
  bool virtual_loop = false;
};

/// The loops of a group's row, outermost first: the representative's loops,
/// and, when the group has several copies, the virtual unrolled loop where
/// the copies' loop paths diverge (innermost when they do not).
struct LoopChain {
  std::vector<ChainLoop> loops;
  int virtual_pos = -1; ///< index of the virtual loop in `loops`, -1 when none

  explicit LoopChain(const Group& g);

  std::size_t size() const { return loops.size(); }
  bool empty() const { return loops.empty(); }
  const ChainLoop& operator[](std::size_t j) const { return loops[j]; }

  /// Chain index of the representative's loop `i`.
  std::size_t index_of(std::size_t i) const {
    return virtual_pos >= 0 && i >= static_cast<std::size_t>(virtual_pos) ? i + 1 : i;
  }

  /// Product of the extents of the loops [from, to).
  double product(std::size_t from, std::size_t to) const {
    double p = 1;
    for (std::size_t j = from; j < to; ++j)
      p *= static_cast<double>(loops[j].extent);
    return p;
  }
};

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_LOOP_CHAIN_H
