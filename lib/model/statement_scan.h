// Private to model: one pass over a statement that yields what grouping its
// unrolled copies needs, and the hash it keys groups by.
#ifndef KILN_LIB_MODEL_STATEMENT_SCAN_H
#define KILN_LIB_MODEL_STATEMENT_SCAN_H

#include "kiln/ir/expr.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace kiln::model::detail {

/// Folds `v` into the running hash `h`.
inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64's finaliser over a running combination: cheap and well spread.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  return h;
}

inline std::uint64_t hash_str(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

/// One pass over a statement that yields everything the grouping needs, so
/// that each node is touched once (the walk is bound by memory latency, not
/// arithmetic): the shape hash of the value, in which every index (i64)
/// subtree is one opaque token since unrolled copies differ only there; the
/// loads in pre-order, so that copies list them alike; and the constant term
/// of every index of the store and the loads (the index with all variables
/// at 0).
class Scanner {
public:
  std::vector<const ir::Load*> loads;
  std::vector<std::size_t> bases;   ///< per load: where its constants start
  std::vector<std::int64_t> consts; ///< the store's dimensions first

  void clear();

  /// Records the constants of the store's indices; call it before hash().
  void store(const std::vector<ir::Expr>& indices) { slot(indices); }

  /// The shape hash of a value, listing its loads and their constants.
  std::uint64_t hash(const ir::Expr& e);

private:
  void slot(const std::vector<ir::Expr>& indices);
  void load(const ir::Load* l);
  std::int64_t index(const ir::Expr& e);
};

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_STATEMENT_SCAN_H
