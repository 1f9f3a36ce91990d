// The loop-nest tree: what a schedule lowers to and what codegen and the
// cost model's features read. Statements are immutable nodes shared through
// the Stmt handle, like expressions (kiln/ir/expr.h); loads inside
// expressions name buffers.
#ifndef KILN_SCHEDULE_LOOP_NEST_H
#define KILN_SCHEDULE_LOOP_NEST_H

#include "kiln/ir/expr.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace kiln::schedule {

#define KILN_FOR_EACH_STMT_NODE(X)                                                                 \
  X(For)                                                                                           \
  X(Store)                                                                                         \
  X(Allocate)                                                                                      \
  X(IfThenElse)                                                                                    \
  X(Block)

enum class StmtKind : std::uint8_t {
#define KILN_STMT_KIND(N) N,
  KILN_FOR_EACH_STMT_NODE(KILN_STMT_KIND)
#undef KILN_STMT_KIND
};

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
};

class Stmt {
public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}
  bool defined() const { return node_ != nullptr; }
  StmtKind kind() const { return node_->kind; }
  const StmtNode* get() const { return node_.get(); }
  template <typename T> const T* as() const {
    return node_ && node_->kind == T::static_kind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& other) const { return node_ == other.node_; }

private:
  std::shared_ptr<const StmtNode> node_;
};

/// Where a buffer lives.
enum class BufferScope : std::uint8_t {
  Argument, ///< passed in by the caller (inputs and outputs), 64-byte aligned
  Global,   ///< an intermediate stage on the heap, allocated by the kernel
  Local,    ///< a small local buffer (register tile, packed block) on the stack
  /// A stage computed from constant inputs alone, at the root: the prepack
  /// function computes it once, the caller keeps it and passes it to every
  /// call of the kernel after the outputs (docs/kernel-abi.md), 64-byte
  /// aligned.
  Packed,
};

/// A dense row-major buffer.
struct Buffer {
  std::string name;
  ir::ScalarType dtype = ir::ScalarType::F32;
  std::vector<std::int64_t> shape;
  BufferScope scope = BufferScope::Global;

  std::int64_t num_elements() const;
  std::int64_t size_bytes() const;
};

enum class ForKind : std::uint8_t { Serial, Parallel, Vectorized, Unrolled };

#define KILN_DECLARE_STMT(N) static constexpr StmtKind static_kind = StmtKind::N;

/// `for var in [0, extent)`.
struct For : StmtNode {
  KILN_DECLARE_STMT(For)
  For(std::string v, std::int64_t e, ForKind k, Stmt b)
      : StmtNode(static_kind), var(std::move(v)), extent(e), for_kind(k), body(std::move(b)) {}
  const std::string var;
  const std::int64_t extent;
  const ForKind for_kind;
  const Stmt body;
  static Stmt make(std::string var, std::int64_t extent, ForKind kind, Stmt body);
};

/// `buffer[indices] = value`.
struct Store : StmtNode {
  KILN_DECLARE_STMT(Store)
  Store(std::string b, std::vector<ir::Expr> i, ir::Expr v)
      : StmtNode(static_kind), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
  const std::string buffer;
  const std::vector<ir::Expr> indices;
  const ir::Expr value;
  static Stmt make(std::string buffer, std::vector<ir::Expr> indices, ir::Expr value);
};

/// A buffer that exists while `body` runs.
struct Allocate : StmtNode {
  KILN_DECLARE_STMT(Allocate)
  Allocate(Buffer b, Stmt s) : StmtNode(static_kind), buffer(std::move(b)), body(std::move(s)) {}
  const Buffer buffer;
  const Stmt body;
  static Stmt make(Buffer buffer, Stmt body);
};

struct IfThenElse : StmtNode {
  KILN_DECLARE_STMT(IfThenElse)
  IfThenElse(ir::Expr c, Stmt t, Stmt e)
      : StmtNode(static_kind), cond(std::move(c)), then_case(std::move(t)),
        else_case(std::move(e)) {}
  const ir::Expr cond;
  const Stmt then_case;
  const Stmt else_case; ///< may be undefined
  static Stmt make(ir::Expr cond, Stmt then_case, Stmt else_case = Stmt());
};

/// Statements in order.
struct Block : StmtNode {
  KILN_DECLARE_STMT(Block)
  explicit Block(std::vector<Stmt> s) : StmtNode(static_kind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
  /// Flattens nested blocks; a single statement is returned as is.
  static Stmt make(std::vector<Stmt> stmts);
};

#undef KILN_DECLARE_STMT

/// A lowered kernel: its arguments (inputs, then outputs, then the packed
/// buffers) and its body; and the prepack function that fills the packed
/// buffers from the constant inputs, with the same arguments.
struct LoweredFunc {
  std::string name;
  std::vector<Buffer> args;
  Stmt body;
  /// Undefined when no stage is packed ahead (no argument is Packed).
  /// Initialised here so that `{name, args, body}` does not warn about it.
  Stmt prepack = Stmt();

  bool has_prepack() const { return prepack.defined(); }
};

/// Replaces variables in every expression of a statement.
Stmt substitute(const Stmt& stmt,
                const std::vector<std::pair<std::string, ir::Expr>>& replacements);

/// Applies `fn` to every expression of a statement (store values and
/// indices, conditions), rebuilding what changed.
Stmt map_exprs(const Stmt& stmt, const std::function<ir::Expr(const ir::Expr&)>& fn);

/// Readable pseudo-code of the loop nest, deterministic (used by `kiln dump
/// --stage loopnest`, logs and golden tests).
std::string to_string(const LoweredFunc& func);
std::string to_string(const Stmt& stmt, int indent = 0);
std::string_view for_kind_name(ForKind kind);

} // namespace kiln::schedule

#endif // KILN_SCHEDULE_LOOP_NEST_H
