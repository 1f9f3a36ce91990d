// Private to model: how a statement (a group of copies) accesses each of its
// buffers along its chain of loops: strides, footprints at every level of
// the nest, cache-line traffic and reuse.
#ifndef KILN_LIB_MODEL_BUFFER_ACCESS_H
#define KILN_LIB_MODEL_BUFFER_ACCESS_H

#include "buffer_geometry.h"
#include "loop_chain.h"
#include "statement_groups.h"

#include "kiln/ir/linear_form.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace kiln::model::detail {

/// The reuse type of a buffer's accesses (docs/features.md).
enum class Reuse {
  Loop,   ///< some loop does not move the access
  Serial, ///< another statement in a shared loop touches the buffer
  None,
};

/// Everything about one buffer of a statement that the row needs.
struct BufferStats {
  std::string_view name;
  BufferGeom geom;
  bool read = false, write = false;
  int accesses = 0; ///< per copy
  // The first access's index pattern.
  const std::vector<ir::Expr>* indices = nullptr;
  std::vector<std::optional<ir::LinearForm>> forms; ///< per dimension
  std::vector<std::int64_t> spread_rep, spread_all; ///< constant spread per dimension
  std::vector<std::int64_t> first_flat;             ///< first access's flat constants, all copies
  double distinct_rep = 1, distinct_all = 1;        ///< distinct flat constants
  double virtual_lines = 1; ///< distinct cache lines of the first access over the copies
  // Per chain loop: stride in elements (0: invariant).
  std::vector<double> stride;
  // Per affine dimension and chain loop: |coefficient| (0 for the virtual loop).
  std::vector<std::vector<double>> coef;
  // Per level l (0..n): unique elements and lines touched by the loops l..n-1.
  std::vector<double> unique_elems, unique_lines;
  // Over the whole run.
  double bytes = 0, lines = 0;
  Reuse reuse = Reuse::None;
  double reuse_dis_iter = 0, reuse_dis_bytes = 0, reuse_ct = 0;
  double innermost_stride = 0; ///< stride of the innermost loop of the chain
};

/// The buffers of group `g` whose loops are `chain`, in the order of their
/// first access (the store's buffer first). `touch` gives the other
/// statements that share a loop with it, for serial reuse.
std::vector<BufferStats> buffer_stats(const Group& g, const LoopChain& chain,
                                      const StatementGroups& groups, const TouchCounts& touch);

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_BUFFER_ACCESS_H
