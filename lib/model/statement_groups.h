// Private to model: the store statements of a loop nest, with the unrolled
// copies of each statement grouped into one.
//
// Lowering expands unrolled loops into copies that differ only in integer
// constants, and a row per copy would both swamp the model (hundreds of rows
// per program) and hide what Ansor sees, an unrolled loop. A group is one
// row; its copies act as one virtual unrolled loop whose extent is the
// number of copies, placed where the copies' loop paths diverge. The row is
// computed from the group's first copy (the representative) and the
// constants of all copies.
#ifndef KILN_LIB_MODEL_STATEMENT_GROUPS_H
#define KILN_LIB_MODEL_STATEMENT_GROUPS_H

#include "kiln/schedule/loop_nest.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::model::detail {

/// One buffer access of a statement: the store (first) or a load.
struct Access {
  std::string_view buffer;
  bool write = false;
  const std::vector<ir::Expr>* indices = nullptr;
};

/// What a group tracks of one access over all copies: the constant term of
/// each index dimension.
struct AccessOffsets {
  std::vector<std::int64_t> min, max;   ///< per dimension, over all copies
  std::vector<std::int64_t> rep;        ///< the representative's
  std::vector<std::int64_t> flat;       ///< flattened constant of every copy
  std::vector<std::int64_t> row_stride; ///< of the buffer, per dimension
};

/// A store statement and its unrolled copies.
struct Group {
  const schedule::Store* store = nullptr;
  std::vector<const schedule::For*> loops; ///< the representative's loop path, outer first
  std::vector<std::pair<const schedule::Allocate*, int>> allocs; ///< with their loop depth
  std::vector<std::pair<const schedule::IfThenElse*, int>> ifs;  ///< with their loop depth
  std::vector<Access> accesses;
  std::vector<AccessOffsets> offsets; ///< per access
  int copies = 1;
  std::size_t prefix = 0; ///< loops shared by every copy (outside the virtual unroll)
};

/// The groups of a kernel, in statement order, and its buffers by name.
struct StatementGroups {
  std::vector<Group> groups;
  /// The kernel's arguments and allocations; the names live in the tree.
  std::unordered_map<std::string_view, const schedule::Buffer*> buffers;

  /// nullptr when `name` is neither an argument nor allocated.
  const schedule::Buffer* find_buffer(std::string_view name) const;
};

/// Walks the kernel's body and groups its stores. `func` must outlive the
/// result, which points into it.
StatementGroups group_statements(const schedule::LoweredFunc& func);

/// Per (loop, buffer), how many groups touch the buffer inside the loop; the
/// loop nullptr stands for the whole kernel. Loops inside the copies count
/// once per group.
using TouchCounts = std::map<std::pair<const schedule::For*, std::string_view>, int>;

/// The touch counts of the groups, for serial reuse.
TouchCounts count_touches(const std::vector<Group>& groups);

} // namespace kiln::model::detail

#endif // KILN_LIB_MODEL_STATEMENT_GROUPS_H
