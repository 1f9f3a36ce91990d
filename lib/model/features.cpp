// Program features (Ansor's groups) from the lowered loop nest, in two
// phases: group the store statements, merging the unrolled copies of each,
// then build one row per group as named groups of values (FeatureRow) and
// lay it out in columns (feature_row.h). docs/features.md lists every column
// with its formula.
#include "kiln/model/features.h"

#include "feature_row.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/expr.h"
#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"
#include "kiln/schedule/loop_nest.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kiln::model {
namespace detail {

using schedule::Allocate;
using schedule::Block;
using schedule::Buffer;
using schedule::BufferScope;
using schedule::For;
using schedule::ForKind;
using schedule::IfThenElse;
using schedule::Stmt;
using schedule::StmtKind;
using schedule::Store;

// --- index analysis --------------------------------------------------------
// What the features need to know of an index expression
// that may not be affine (the div/mod of fused loops): its value at a point
// of the loop variables, and its interval over the loop ranges.

/// x op y as an index of the op language computes it, except that division
/// and modulo by 0 give 0: the evaluators below set variables to 0 or 1, so
/// a divisor made of variables can be 0 at their point.
inline std::int64_t eval_binary(ir::BinaryOp op, std::int64_t x, std::int64_t y) {
  switch (op) {
  case ir::BinaryOp::Add:
    return x + y;
  case ir::BinaryOp::Sub:
    return x - y;
  case ir::BinaryOp::Mul:
    return x * y;
  case ir::BinaryOp::Div:
    return y == 0 ? 0 : ir::floor_div(x, y);
  case ir::BinaryOp::Mod:
    return y == 0 ? 0 : ir::floor_mod(x, y);
  case ir::BinaryOp::Min:
    return std::min(x, y);
  case ir::BinaryOp::Max:
    return std::max(x, y);
  }
  return 0;
}

/// Integer value of an index expression with the variable `one` at 1 and
/// every other variable at 0 (`one` empty: all at 0). With all at 0 this is
/// the constant term of an affine index; the difference of the two is a
/// loop's stride, also through the floor divisions of fused loops.
std::int64_t eval_index(const ir::Expr& e, std::string_view one);

/// Loop variables and their extents, for interval().
using LoopRanges = std::vector<std::pair<std::string_view, std::int64_t>>;

/// The smallest and largest value of an index when each loop variable ranges
/// over [0, extent); nullopt when it cannot tell. ir::bounds_of does the
/// same through a map of names; this runs for every level of every
/// non-affine index, so it scans a short list.
std::optional<ir::Interval> interval(const ir::Expr& e, const LoopRanges& ranges);

/// Whether comparison `op` holds between x and y.
static bool holds(ir::CompareOp op, std::int64_t x, std::int64_t y) {
  switch (op) {
  case ir::CompareOp::EQ:
    return x == y;
  case ir::CompareOp::NE:
    return x != y;
  case ir::CompareOp::LT:
    return x < y;
  case ir::CompareOp::LE:
    return x <= y;
  case ir::CompareOp::GT:
    return x > y;
  case ir::CompareOp::GE:
    return x >= y;
  }
  return false;
}

std::int64_t eval_index(const ir::Expr& e, std::string_view one) {
  switch (e.kind()) {
  case ir::ExprKind::IntImm:
    return e.as<ir::IntImm>()->value;
  case ir::ExprKind::Var:
    return !one.empty() && e.as<ir::Var>()->name == one ? 1 : 0;
  case ir::ExprKind::Cast:
    return eval_index(e.as<ir::Cast>()->value, one);
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    return eval_binary(b->op, eval_index(b->a, one), eval_index(b->b, one));
  }
  case ir::ExprKind::Select: {
    const auto* s = e.as<ir::Select>();
    const auto* c = s->cond.as<ir::Compare>();
    if (!c)
      return eval_index(s->t, one);
    const bool taken = holds(c->op, eval_index(c->a, one), eval_index(c->b, one));
    return eval_index(taken ? s->t : s->f, one);
  }
  default:
    return 0;
  }
}

std::optional<ir::Interval> interval(const ir::Expr& e, const LoopRanges& ranges) {
  switch (e.kind()) {
  case ir::ExprKind::IntImm: {
    const std::int64_t v = e.as<ir::IntImm>()->value;
    return ir::Interval{v, v};
  }
  case ir::ExprKind::Var:
    for (const auto& [name, extent] : ranges)
      if (name == e.as<ir::Var>()->name)
        return ir::Interval{0, extent - 1};
    return std::nullopt;
  case ir::ExprKind::Cast:
    return interval(e.as<ir::Cast>()->value, ranges);
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    auto x = interval(b->a, ranges);
    auto y = interval(b->b, ranges);
    if (!x || !y)
      return std::nullopt;
    return ir::combine(*x, *y, b->op);
  }
  case ir::ExprKind::Select: {
    const auto* s = e.as<ir::Select>();
    auto x = interval(s->t, ranges);
    auto y = interval(s->f, ranges);
    if (!x || !y)
      return std::nullopt;
    return ir::Interval{std::min(x->min, y->min), std::max(x->max, y->max)};
  }
  default:
    return std::nullopt;
  }
}

// --- statement scan --------------------------------------------------------
// One pass over a statement that yields what grouping its
// unrolled copies needs, and the hash it keys groups by.

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

void Scanner::clear() {
  loads.clear();
  bases.clear();
  consts.clear();
}

std::uint64_t Scanner::hash(const ir::Expr& e) {
  if (!e.defined())
    return 1;
  if (e.type() == ir::ScalarType::I64) {
    index(e);
    return 2;
  }
  std::uint64_t h =
      mix(static_cast<std::uint64_t>(e.kind()) + 16, static_cast<std::uint64_t>(e.type()));
  switch (e.kind()) {
  case ir::ExprKind::IntImm:
    return mix(h, static_cast<std::uint64_t>(e.as<ir::IntImm>()->value));
  case ir::ExprKind::FloatImm: {
    double v = e.as<ir::FloatImm>()->value;
    std::uint64_t bits = 0;
    static_assert(sizeof(bits) == sizeof(v));
    std::memcpy(&bits, &v, sizeof(v));
    return mix(h, bits);
  }
  case ir::ExprKind::Var:
    return mix(h, hash_str(e.as<ir::Var>()->name));
  case ir::ExprKind::Cast:
    return mix(h, hash(e.as<ir::Cast>()->value));
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    h = mix(h, static_cast<std::uint64_t>(b->op));
    h = mix(h, hash(b->a));
    return mix(h, hash(b->b));
  }
  case ir::ExprKind::Compare: {
    const auto* c = e.as<ir::Compare>();
    h = mix(h, static_cast<std::uint64_t>(c->op));
    h = mix(h, hash(c->a));
    return mix(h, hash(c->b));
  }
  case ir::ExprKind::Logical: {
    const auto* l = e.as<ir::Logical>();
    h = mix(h, static_cast<std::uint64_t>(l->op));
    h = mix(h, hash(l->a));
    return mix(h, hash(l->b));
  }
  case ir::ExprKind::Not:
    return mix(h, hash(e.as<ir::Not>()->a));
  case ir::ExprKind::Select: {
    const auto* s = e.as<ir::Select>();
    h = mix(h, hash(s->cond));
    h = mix(h, hash(s->t));
    return mix(h, hash(s->f));
  }
  case ir::ExprKind::Call: {
    const auto* c = e.as<ir::Call>();
    h = mix(h, static_cast<std::uint64_t>(c->fn));
    for (const ir::Expr& a : c->args)
      h = mix(h, hash(a));
    return h;
  }
  case ir::ExprKind::Load: {
    const auto* l = e.as<ir::Load>();
    load(l);
    return mix(mix(h, hash_str(l->tensor)), l->indices.size());
  }
  case ir::ExprKind::Reduce:
    return mix(h, hash(e.as<ir::Reduce>()->body));
  }
  return h;
}

void Scanner::slot(const std::vector<ir::Expr>& indices) {
  const std::size_t base = consts.size();
  consts.resize(base + indices.size());
  for (std::size_t d = 0; d < indices.size(); ++d) {
    const std::int64_t v = index(indices[d]); // may append nested loads' slots
    consts[base + d] = v;
  }
}

void Scanner::load(const ir::Load* l) {
  loads.push_back(l);
  bases.push_back(consts.size());
  slot(l->indices);
}

/// The value of an index with every variable at 0; loads inside it (a
/// gather) are listed and count as 0.
std::int64_t Scanner::index(const ir::Expr& e) {
  switch (e.kind()) {
  case ir::ExprKind::IntImm:
    return e.as<ir::IntImm>()->value;
  case ir::ExprKind::Var:
    return 0;
  case ir::ExprKind::Cast:
    return index(e.as<ir::Cast>()->value);
  case ir::ExprKind::Binary: {
    const auto* b = e.as<ir::Binary>();
    // Operands in order: each lists the loads it holds.
    const std::int64_t x = index(b->a), y = index(b->b);
    return eval_binary(b->op, x, y);
  }
  case ir::ExprKind::Load:
    load(e.as<ir::Load>());
    return 0;
  default: {
    // Selects and the like are rare in indices: the value the general
    // evaluator gives, and every load on either branch, so that copies
    // list the same loads whichever branch their constants take.
    struct Collector : ir::ExprVisitor {
      Scanner* self;
      using ExprVisitor::visit;
      void visit(const ir::Load* l) override { self->load(l); }
    } c;
    c.self = this;
    c.visit(e);
    return eval_index(e, {});
  }
  }
}

// --- buffer geometry -------------------------------------------------------
// The layout of a buffer as the features see it, dense and
// row-major.

/// The bytes of a cache line.
inline constexpr int kCacheLineBytes = 64;

/// The extent given to a dimension whose extent is not known.
inline constexpr std::int64_t kUnknownExtent = std::int64_t{1} << 40;

struct BufferGeom {
  int elem_bytes = 4;
  std::vector<std::int64_t> shape;      ///< per index dimension; "unknown" is huge
  std::vector<std::int64_t> row_stride; ///< elements per step of each dimension
};

/// The geometry of buffer `b` (nullptr: unknown) indexed with `dims`
/// dimensions. A shape of another rank counts as unknown.
BufferGeom geometry(const schedule::Buffer* b, std::size_t dims);

BufferGeom geometry(const schedule::Buffer* b, std::size_t dims) {
  BufferGeom g;
  if (b)
    g.elem_bytes = std::max(1, ir::bytes(b->dtype));
  g.shape.assign(dims, kUnknownExtent);
  if (b && b->shape.size() == dims)
    for (std::size_t d = 0; d < dims; ++d)
      g.shape[d] = std::max<std::int64_t>(1, b->shape[d]);
  g.row_stride.assign(dims, 1);
  for (std::size_t d = dims; d-- > 1;)
    g.row_stride[d - 1] = g.row_stride[d] * std::min(g.shape[d], kUnknownExtent);
  return g;
}

// --- statement groups ------------------------------------------------------
// The store statements of a loop nest, with the unrolled
// copies of each statement grouped into one.
//
// Lowering expands unrolled loops into copies that differ only in integer
// constants, and a row per copy would both swamp the model (hundreds of rows
// per program) and hide what Ansor sees, an unrolled loop. A group is one
// row; its copies act as one virtual unrolled loop whose extent is the
// number of copies, placed where the copies' loop paths diverge. The row is
// computed from the group's first copy (the representative) and the
// constants of all copies.

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

const Buffer* StatementGroups::find_buffer(std::string_view name) const {
  auto it = buffers.find(name);
  return it == buffers.end() ? nullptr : it->second;
}

namespace {

/// Walks a nest once. A statement joins the group of the statements it is a
/// copy of: same enclosing context (loops, allocations, conditions, hashed
/// on the way down), same stored buffer, same value shape.
class GroupBuilder {
public:
  explicit GroupBuilder(const schedule::LoweredFunc& func) {
    for (const Buffer& b : func.args)
      out_.buffers.emplace(b.name, &b);
  }

  void walk(const Stmt& s, std::uint64_t ctx) {
    if (!s.defined())
      return;
    switch (s.kind()) {
    case StmtKind::For: {
      const auto* f = s.as<For>();
      loops_.push_back(f);
      walk(f->body, mix(mix(mix(ctx, hash_str(f->var)), static_cast<std::uint64_t>(f->extent)),
                        static_cast<std::uint64_t>(f->for_kind)));
      loops_.pop_back();
      return;
    }
    case StmtKind::Allocate: {
      const auto* a = s.as<Allocate>();
      out_.buffers[std::string_view(a->buffer.name)] = &a->buffer;
      allocs_.emplace_back(a, static_cast<int>(loops_.size()));
      walk(a->body, mix(mix(ctx, 3), hash_str(a->buffer.name)));
      allocs_.pop_back();
      return;
    }
    case StmtKind::IfThenElse: {
      const auto* i = s.as<IfThenElse>();
      ifs_.emplace_back(i, static_cast<int>(loops_.size()));
      Scanner cond;
      std::uint64_t c = mix(mix(ctx, 4), cond.hash(i->cond));
      walk(i->then_case, mix(c, 5));
      walk(i->else_case, mix(c, 6));
      ifs_.pop_back();
      return;
    }
    case StmtKind::Block:
      for (const Stmt& c : s.as<Block>()->stmts)
        walk(c, ctx);
      return;
    case StmtKind::Store:
      add_store(s.as<Store>(), ctx);
      return;
    }
  }

  StatementGroups take() { return std::move(out_); }

private:
  void add_store(const Store* st, std::uint64_t ctx) {
    scan_.clear();
    scan_.store(st->indices);
    const std::uint64_t key =
        mix(mix(mix(ctx, hash_str(st->buffer)), scan_.hash(st->value)), st->indices.size());
    std::vector<Group>& groups = out_.groups;
    auto [it, inserted] = index_.try_emplace(key, static_cast<int>(groups.size()));
    if (inserted) {
      Group g;
      g.store = st;
      g.loops = loops_;
      g.allocs = allocs_;
      g.ifs = ifs_;
      g.prefix = loops_.size();
      g.accesses.push_back({st->buffer, true, &st->indices});
      for (const ir::Load* l : scan_.loads)
        g.accesses.push_back({l->tensor, false, &l->indices});
      g.offsets.resize(g.accesses.size());
      for (std::size_t a = 0; a < g.accesses.size(); ++a)
        record(g, a, true);
      groups.push_back(std::move(g));
      return;
    }
    Group& g = groups[static_cast<std::size_t>(it->second)];
    // A hash collision between different statements would show here; such a
    // statement still counts as a copy, but its constants are not recorded.
    if (scan_.loads.size() + 1 != g.accesses.size())
      return;
    ++g.copies;
    std::size_t p = 0;
    while (p < g.prefix && p < loops_.size() && g.loops[p] == loops_[p])
      ++p;
    g.prefix = p;
    for (std::size_t a = 0; a < g.accesses.size(); ++a)
      record(g, a, false);
  }

  /// Records the constants the scanner found for access `a` of the statement.
  void record(Group& g, std::size_t a, bool first) {
    AccessOffsets& o = g.offsets[a];
    const std::size_t dims = a == 0 ? g.store->indices.size() : scan_.loads[a - 1]->indices.size();
    const std::int64_t* consts = scan_.consts.data() + (a == 0 ? 0 : scan_.bases[a - 1]);
    if (first) {
      o.min.assign(dims, std::numeric_limits<std::int64_t>::max());
      o.max.assign(dims, std::numeric_limits<std::int64_t>::min());
      o.rep.assign(consts, consts + dims);
      // The buffers allocated so far: an allocation is recorded on the way down.
      o.row_stride = geometry(out_.find_buffer(g.accesses[a].buffer), dims).row_stride;
    }
    if (o.min.size() != dims)
      return;
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < dims; ++d) {
      o.min[d] = std::min(o.min[d], consts[d]);
      o.max[d] = std::max(o.max[d], consts[d]);
      flat += consts[d] * o.row_stride[d];
    }
    o.flat.push_back(flat);
  }

  StatementGroups out_;
  std::unordered_map<std::uint64_t, int> index_; ///< group of each key
  std::vector<const For*> loops_;
  std::vector<std::pair<const Allocate*, int>> allocs_;
  std::vector<std::pair<const IfThenElse*, int>> ifs_;
  Scanner scan_;
};

} // namespace

StatementGroups group_statements(const schedule::LoweredFunc& func) {
  GroupBuilder gb(func);
  gb.walk(func.body, 0);
  return gb.take();
}

TouchCounts count_touches(const std::vector<Group>& groups) {
  TouchCounts touch;
  for (const Group& g : groups) {
    std::vector<std::string_view> names;
    for (const Access& a : g.accesses)
      if (std::find(names.begin(), names.end(), a.buffer) == names.end())
        names.push_back(a.buffer);
    for (std::string_view n : names) {
      ++touch[{nullptr, n}];
      for (const For* f : g.loops)
        ++touch[{f, n}];
    }
  }
  return touch;
}

// --- op counts -------------------------------------------------------------
// Counting the operations of expressions into the compute
// group of a feature row.

/// Adds the operations of one evaluation of `e` to `counts`. A multiply
/// feeding an add or subtract of the same class is one multiply-add (an FMA
/// on the host).
void count_ops(const ir::Expr& e, ComputeCounts& counts);

/// to += from × k, operation by operation.
void add_scaled(ComputeCounts& to, const ComputeCounts& from, double k);

/// Floating-point operations, a multiply-add counting two.
double float_flops(const ComputeCounts& ops);

namespace {

class OpCounter : public ir::ExprVisitor {
public:
  explicit OpCounter(ComputeCounts& counts) : counts_(counts) {}
  using ExprVisitor::visit;

  void visit(const ir::Binary* b) override {
    const bool f = ir::is_float(b->type);
    if (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) {
      const auto* ma = b->a.as<ir::Binary>();
      const auto* mb = b->b.as<ir::Binary>();
      const ir::Binary* mul = ma && ma->op == ir::BinaryOp::Mul   ? ma
                              : mb && mb->op == ir::BinaryOp::Mul ? mb
                                                                  : nullptr;
      if (mul) {
        ++(f ? counts_.float_mad : counts_.int_mad);
        visit(mul->a);
        visit(mul->b);
        visit(mul == ma ? b->b : b->a);
        return;
      }
    }
    switch (b->op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
      ++(f ? counts_.float_addsub : counts_.int_addsub);
      break;
    case ir::BinaryOp::Mul:
      ++(f ? counts_.float_mul : counts_.int_mul);
      break;
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Mod:
      ++(f ? counts_.float_divmod : counts_.int_divmod);
      break;
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max:
      ++(f ? counts_.float_cmp : counts_.int_cmp);
      break;
    }
    ExprVisitor::visit(b);
  }
  void visit(const ir::Compare* c) override {
    ++(ir::is_float(c->a.type()) ? counts_.float_cmp : counts_.int_cmp);
    ExprVisitor::visit(c);
  }
  void visit(const ir::Logical* l) override {
    ++counts_.bool_op;
    ExprVisitor::visit(l);
  }
  void visit(const ir::Not* n) override {
    ++counts_.bool_op;
    ExprVisitor::visit(n);
  }
  void visit(const ir::Select* s) override {
    ++counts_.select;
    ExprVisitor::visit(s);
  }
  void visit(const ir::Call* c) override {
    ++(c->fn == ir::Intrinsic::Abs ? counts_.float_other : counts_.float_math);
    ExprVisitor::visit(c);
  }
  void visit(const ir::Cast* c) override {
    ++(ir::is_float(c->type) ? counts_.float_other : counts_.int_other);
    ExprVisitor::visit(c);
  }

private:
  ComputeCounts& counts_;
};

} // namespace

void count_ops(const ir::Expr& e, ComputeCounts& counts) {
  OpCounter counter(counts);
  counter.visit(e);
}

// Every field of ComputeCounts, for arithmetic over all of them.
constexpr double ComputeCounts::*kOps[] = {
    &ComputeCounts::float_mad,    &ComputeCounts::float_addsub, &ComputeCounts::float_mul,
    &ComputeCounts::float_divmod, &ComputeCounts::float_cmp,    &ComputeCounts::float_math,
    &ComputeCounts::float_other,  &ComputeCounts::int_mad,      &ComputeCounts::int_addsub,
    &ComputeCounts::int_mul,      &ComputeCounts::int_divmod,   &ComputeCounts::int_cmp,
    &ComputeCounts::int_other,    &ComputeCounts::bool_op,      &ComputeCounts::select};
static_assert(std::size(kOps) * sizeof(double) == sizeof(ComputeCounts),
              "kOps must list every field of ComputeCounts");

void add_scaled(ComputeCounts& to, const ComputeCounts& from, double k) {
  for (double ComputeCounts::*op : kOps)
    to.*op += from.*op * k;
}

double float_flops(const ComputeCounts& ops) {
  return 2 * ops.float_mad + ops.float_addsub + ops.float_mul + ops.float_divmod + ops.float_cmp +
         ops.float_math;
}

// --- loop chain ------------------------------------------------------------
// The loops around a statement as its row sees them.

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

LoopChain::LoopChain(const Group& g) {
  for (std::size_t i = 0; i < g.loops.size(); ++i) {
    if (i == g.prefix && g.copies > 1) {
      virtual_pos = static_cast<int>(loops.size());
      loops.push_back({nullptr, g.copies, schedule::ForKind::Unrolled, true});
    }
    const schedule::For* f = g.loops[i];
    loops.push_back({&f->var, f->extent, f->for_kind, false});
  }
  if (g.copies > 1 && virtual_pos < 0) {
    virtual_pos = static_cast<int>(loops.size());
    loops.push_back({nullptr, g.copies, schedule::ForKind::Unrolled, true});
  }
}

// --- buffer access ---------------------------------------------------------
// How a statement (a group of copies) accesses each of its
// buffers along its chain of loops: strides, footprints at every level of
// the nest, cache-line traffic and reuse.

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

/// Unique elements and 64-byte lines of a box: the innermost dimensions
/// that cover the whole buffer extent join the next one in a contiguous run.
static std::pair<double, double> footprint(const BufferStats& b, const std::vector<double>& span) {
  if (span.empty())
    return {1, 1};
  double elems = 1;
  for (double s : span)
    elems *= s;
  std::size_t k = span.size() - 1;
  double run = span[k];
  while (k > 0 && span[k] >= static_cast<double>(b.geom.shape[k])) {
    --k;
    run *= span[k];
  }
  double lines_per_run = std::ceil(run * b.geom.elem_bytes / kCacheLineBytes);
  return {elems, (elems / run) * lines_per_run};
}

namespace {

/// The analysis of one group's buffers along its chain.
class BufferAnalysis {
public:
  BufferAnalysis(const Group& g, const LoopChain& chain, const StatementGroups& groups,
                 const TouchCounts& touch)
      : g(g), chain(chain), groups(groups), touch(touch) {}

  /// The buffers in the order of their first access, with their constant
  /// spreads.
  std::vector<BufferStats> collect() {
    std::vector<BufferStats> out;
    for (std::size_t a = 0; a < g.accesses.size(); ++a) {
      const Access& acc = g.accesses[a];
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const BufferStats& b) { return b.name == acc.buffer; });
      if (it == out.end()) {
        BufferStats b;
        b.name = acc.buffer;
        b.indices = acc.indices;
        const std::size_t dims = acc.indices->size();
        b.geom = geometry(groups.find_buffer(acc.buffer), dims);
        for (const ir::Expr& e : *acc.indices)
          b.forms.push_back(ir::linearize(e));
        b.first_flat = g.offsets[a].flat;
        b.spread_rep.assign(dims, 0);
        b.spread_all.assign(dims, 0);
        out.push_back(std::move(b));
        it = out.end() - 1;
      }
      BufferStats& b = *it;
      (acc.write ? b.write : b.read) = true;
      ++b.accesses;
    }
    for (BufferStats& b : out)
      spreads(b);
    return out;
  }

  /// Constant spreads of a buffer's accesses within the representative and
  /// over all copies, and the distinct flat offsets of each.
  void spreads(BufferStats& b) {
    const std::size_t dims = b.indices->size();
    std::vector<std::int64_t> rep_min(dims, std::numeric_limits<std::int64_t>::max());
    std::vector<std::int64_t> rep_max(dims, std::numeric_limits<std::int64_t>::min());
    std::vector<std::int64_t> all_min = rep_min, all_max = rep_max;
    std::vector<std::int64_t> rep_flat, all_flat;
    for (std::size_t a = 0; a < g.accesses.size(); ++a) {
      const AccessOffsets& o = g.offsets[a];
      if (g.accesses[a].buffer != b.name || o.rep.size() != dims)
        continue;
      for (std::size_t d = 0; d < dims; ++d) {
        rep_min[d] = std::min(rep_min[d], o.rep[d]);
        rep_max[d] = std::max(rep_max[d], o.rep[d]);
        all_min[d] = std::min(all_min[d], o.min[d]);
        all_max[d] = std::max(all_max[d], o.max[d]);
      }
      if (!o.flat.empty())
        rep_flat.push_back(o.flat.front());
      all_flat.insert(all_flat.end(), o.flat.begin(), o.flat.end());
    }
    for (std::size_t d = 0; d < dims; ++d) {
      if (rep_min[d] <= rep_max[d])
        b.spread_rep[d] = rep_max[d] - rep_min[d];
      if (all_min[d] <= all_max[d])
        b.spread_all[d] = all_max[d] - all_min[d];
    }
    auto distinct = [](std::vector<std::int64_t>& v) {
      std::sort(v.begin(), v.end());
      return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
    };
    b.distinct_rep = std::max(1.0, distinct(rep_flat));
    b.distinct_all = std::max(b.distinct_rep, distinct(all_flat));
    // Offsets are relative to an unknown base; lines assume it is aligned.
    std::vector<std::int64_t> lines;
    for (std::int64_t f : b.first_flat)
      lines.push_back(ir::floor_div(f * b.geom.elem_bytes, kCacheLineBytes));
    b.virtual_lines = std::max(1.0, distinct(lines));
  }

  /// The virtual loop's number of distinct footprints (1: every copy touches
  /// the same elements, copies: all differ).
  double virtual_distinct(const BufferStats& b) const {
    return std::clamp(b.distinct_all / b.distinct_rep, 1.0, static_cast<double>(g.copies));
  }

  /// Per chain loop, the elements an iteration moves the first access by (0:
  /// invariant). A non-affine dimension takes the difference of its values
  /// at var = 1 and var = 0; the virtual loop, the copies' spread over their
  /// distinct footprints.
  void strides(BufferStats& b) {
    const std::size_t dims = b.indices->size();
    b.stride.assign(chain.size(), 0);
    b.coef.assign(dims, std::vector<double>(chain.size(), 0.0));
    for (std::size_t j = 0; j < chain.size(); ++j) {
      if (chain[j].virtual_loop) {
        double distinct = virtual_distinct(b);
        if (distinct > 1) {
          auto [lo, hi] = std::minmax_element(b.first_flat.begin(), b.first_flat.end());
          b.stride[j] = std::max(1.0, static_cast<double>(*hi - *lo) / (distinct - 1));
        }
        continue;
      }
      double s = 0;
      bool depends = false;
      for (std::size_t d = 0; d < dims; ++d) {
        std::int64_t c = 0;
        if (b.forms[d]) {
          c = b.forms[d]->coeff(*chain[j].var);
          depends = depends || c != 0;
          b.coef[d][j] = std::abs(static_cast<double>(c));
        } else {
          c = eval_index((*b.indices)[d], *chain[j].var) - eval_index((*b.indices)[d], {});
          depends = depends || ir::uses_var((*b.indices)[d], *chain[j].var);
        }
        s += static_cast<double>(c) * static_cast<double>(b.geom.row_stride[d]);
      }
      s = std::abs(s);
      b.stride[j] = depends ? std::max(1.0, s) : 0.0;
    }
  }

  /// Bounding box of the elements the loops l..n-1 touch, per dimension.
  std::vector<double> spans(const BufferStats& b, std::size_t l) const {
    const std::size_t dims = b.indices->size();
    std::vector<double> span(dims, 1);
    LoopRanges ranges; // only for non-affine indices
    bool ranges_ready = false;
    for (std::size_t d = 0; d < dims; ++d) {
      double s = 1;
      if (b.forms[d]) {
        for (std::size_t j = l; j < chain.size(); ++j)
          s += b.coef[d][j] * static_cast<double>(chain[j].extent - 1);
      } else {
        if (!ranges_ready) {
          for (std::size_t j = 0; j < chain.size(); ++j)
            if (!chain[j].virtual_loop)
              ranges.push_back({*chain[j].var, j >= l ? chain[j].extent : 1});
          ranges_ready = true;
        }
        auto range = interval((*b.indices)[d], ranges);
        s = range ? static_cast<double>(range->max - range->min + 1)
                  : static_cast<double>(b.geom.shape[d]);
      }
      const bool virtual_inside =
          chain.virtual_pos >= 0 && static_cast<std::size_t>(chain.virtual_pos) >= l;
      s += static_cast<double>(virtual_inside ? b.spread_all[d] : b.spread_rep[d]);
      span[d] = std::clamp(s, 1.0, static_cast<double>(b.geom.shape[d]));
    }
    return span;
  }

  /// The footprint at every level of the chain, 0 (the whole run) to n (one
  /// execution).
  void footprints(BufferStats& b) {
    b.unique_elems.assign(chain.size() + 1, 1);
    b.unique_lines.assign(chain.size() + 1, 1);
    for (std::size_t l = 0; l <= chain.size(); ++l) {
      auto [elems, lines] = footprint(b, spans(b, l));
      b.unique_elems[l] = elems;
      b.unique_lines[l] = lines;
    }
  }

  /// Lines touched over the whole run, as in Ansor: inner loops in which the
  /// access is invariant touch no new line; the first loop that moves it
  /// moves `stride` elements per iteration.
  void traffic(BufferStats& b) {
    const double all = chain.product(0, chain.size());
    b.bytes = all * b.accesses * b.geom.elem_bytes;
    b.lines = 1;
    for (std::size_t j = chain.size(); j-- > 0;) {
      if (b.stride[j] == 0)
        continue;
      double moves = 1;
      for (std::size_t i = 0; i < j; ++i)
        moves *= chain[i].virtual_loop ? virtual_distinct(b) : static_cast<double>(chain[i].extent);
      // The copies' lines are known exactly; a real loop moves `stride`
      // elements per iteration.
      const double per = chain[j].virtual_loop
                             ? b.virtual_lines
                             : static_cast<double>(chain[j].extent) *
                                   std::min(1.0, b.stride[j] * b.geom.elem_bytes / kCacheLineBytes);
      b.lines = std::max(1.0, moves * per);
      break;
    }
    b.innermost_stride = chain.empty() ? 0 : b.stride.back();
  }

  /// The reuse type, count and distance of the buffer; `all` are the
  /// statement's buffers, whose bytes make the distance.
  void reuse(BufferStats& b, const std::vector<BufferStats>& all) {
    auto bytes_at = [&](std::size_t level) {
      double s = 0;
      for (const BufferStats& o : all)
        s += o.unique_elems[level] * o.geom.elem_bytes;
      return s;
    };
    // Loop multiple read: the innermost loop that does not move the access.
    for (std::size_t j = chain.size(); j-- > 0;) {
      const ChainLoop& c = chain[j];
      if (c.extent <= 1)
        continue;
      double ct = 0;
      if (c.virtual_loop) {
        double distinct = virtual_distinct(b);
        if (distinct < static_cast<double>(c.extent))
          ct = static_cast<double>(c.extent) / distinct;
      } else if (b.stride[j] == 0) {
        ct = static_cast<double>(c.extent);
      }
      if (ct == 0)
        continue;
      b.reuse = Reuse::Loop;
      b.reuse_ct = ct;
      b.reuse_dis_iter = chain.product(j + 1, chain.size());
      b.reuse_dis_bytes = bytes_at(j + 1);
      return;
    }
    // Serial multiple read/write: another statement in a shared loop touches
    // the same buffer.
    for (std::size_t i = g.loops.size() + 1; i-- > 0;) {
      const For* f = i == 0 ? nullptr : g.loops[i - 1];
      auto it = touch.find({f, b.name});
      if (it == touch.end() || it->second < 2)
        continue;
      const std::size_t inner = i == 0 ? 0 : chain.index_of(i - 1) + 1;
      b.reuse = Reuse::Serial;
      b.reuse_ct = it->second;
      b.reuse_dis_iter = chain.product(inner, chain.size());
      b.reuse_dis_bytes = bytes_at(inner);
      return;
    }
  }

private:
  const Group& g;
  const LoopChain& chain;
  const StatementGroups& groups;
  /// (For node or nullptr for the root, buffer) -> groups touching it.
  const TouchCounts& touch;
};

} // namespace

std::vector<BufferStats> buffer_stats(const Group& g, const LoopChain& chain,
                                      const StatementGroups& groups, const TouchCounts& touch) {
  BufferAnalysis analysis(g, chain, groups, touch);
  std::vector<BufferStats> bufs = analysis.collect();
  for (BufferStats& b : bufs) {
    analysis.strides(b);
    analysis.footprints(b);
    analysis.traffic(b);
  }
  // Reuse distances count the bytes of every buffer, so all come first.
  for (BufferStats& b : bufs)
    analysis.reuse(b, bufs);
  return bufs;
}

// --- row builder -----------------------------------------------------------
// The feature row of one statement group.

/// The features of group `g` of `groups`; `touch` counts the groups touching
/// each buffer in each loop (count_touches).
FeatureRow build_row(const Group& g, const StatementGroups& groups, const TouchCounts& touch);

/// Operations of one execution of the statement: its value and the indices
/// of its store (a load's indices are inside the value).
static ComputeCounts ops_per_execution(const Group& g) {
  ComputeCounts ops;
  count_ops(g.store->value, ops);
  for (const ir::Expr& e : g.store->indices)
    count_ops(e, ops);
  return ops;
}

/// Operations of the statement over the whole run: `per_execution` times
/// every execution, and the conditions of enclosing ifs once per iteration
/// of the loops around them.
static ComputeCounts total_ops(const Group& g, const LoopChain& chain,
                               const ComputeCounts& per_execution) {
  ComputeCounts total;
  add_scaled(total, per_execution, chain.product(0, chain.size()));
  for (const auto& [node, depth] : g.ifs) {
    ComputeCounts guard;
    count_ops(node->cond, guard);
    // The loops of the chain outside the if.
    const std::size_t outside =
        depth == 0 ? 0 : chain.index_of(static_cast<std::size_t>(depth) - 1) + 1;
    add_scaled(total, guard, chain.product(0, outside));
  }
  return total;
}

/// The loops of `kind` in the chain.
static AnnotationFeatures annotation(const LoopChain& chain, ForKind kind) {
  double num = 0, prod = 1, inner = 0;
  int inner_pos = -1;
  for (std::size_t j = 0; j < chain.size(); ++j) {
    if (chain[j].kind != kind)
      continue;
    ++num;
    prod *= static_cast<double>(chain[j].extent);
    inner = static_cast<double>(chain[j].extent);
    inner_pos = static_cast<int>(j);
  }
  AnnotationFeatures f;
  f.num = num;
  f.prod = num > 0 ? prod : 0;
  f.len_inner = inner;
  const int last = static_cast<int>(chain.size()) - 1;
  if (inner_pos < 0)
    f.pos_none = 1;
  else if (inner_pos == last)
    f.pos_inner = 1;
  else if (inner_pos == 0)
    f.pos_outer = 1;
  else
    f.pos_middle = 1;
  return f;
}

static BufferFeatures buffer_features(const BufferStats& b) {
  BufferFeatures f;
  f.is_read = b.read && !b.write;
  f.is_write = b.write && !b.read;
  f.is_read_write = b.read && b.write;
  f.bytes = b.bytes;
  f.unique_bytes = b.unique_elems[0] * b.geom.elem_bytes;
  f.lines = b.lines;
  f.unique_lines = b.unique_lines[0];
  switch (b.reuse) {
  case Reuse::Loop:
    f.reuse_loop = 1;
    break;
  case Reuse::Serial:
    f.reuse_serial = 1;
    break;
  case Reuse::None:
    f.reuse_none = 1;
    break;
  }
  f.reuse_dis_iter = b.reuse_dis_iter;
  f.reuse_dis_bytes = b.reuse_dis_bytes;
  f.reuse_ct = b.reuse_ct;
  const double ct = std::max(1.0, b.reuse_ct);
  f.bytes_d_reuse_ct = f.bytes / ct;
  f.unique_bytes_d_reuse_ct = f.unique_bytes / ct;
  f.lines_d_reuse_ct = f.lines / ct;
  f.unique_lines_d_reuse_ct = f.unique_lines / ct;
  f.stride = b.innermost_stride;
  return f;
}

/// The buffer slots: the top buffers by lines, then bytes, then name (for
/// determinism); the slots left over stay 0.
static void fill_buffer_slots(const std::vector<BufferStats>& bufs,
                              std::array<BufferFeatures, kBufferSlots>& slots) {
  std::vector<const BufferStats*> order;
  for (const BufferStats& b : bufs)
    order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const BufferStats* x, const BufferStats* y) {
    if (x->lines != y->lines)
      return x->lines > y->lines;
    if (x->bytes != y->bytes)
      return x->bytes > y->bytes;
    return x->name < y->name;
  });
  for (std::size_t slot = 0; slot < order.size() && slot < kBufferSlots; ++slot)
    slots[slot] = buffer_features(*order[slot]);
}

/// FLOPs per byte of unique data at every level of the nest from the
/// statement outwards, resampled at evenly spaced points in log2(FLOPs)
/// (Ansor's curve). All 0 without float arithmetic.
static std::array<double, kIntensityPoints>
intensity(const LoopChain& chain, const ComputeCounts& ops, const std::vector<BufferStats>& bufs) {
  std::array<double, kIntensityPoints> out{};
  const double flops = float_flops(ops);
  if (flops <= 0)
    return out;
  std::vector<double> x, y; // log2 FLOPs and intensity, inner to outer
  for (std::size_t l = chain.size() + 1; l-- > 0;) {
    double f = flops * chain.product(l, chain.size());
    double bytes = 0;
    for (const BufferStats& b : bufs)
      bytes += b.unique_elems[l] * b.geom.elem_bytes;
    x.push_back(std::log2(f));
    y.push_back(bytes > 0 ? f / bytes : 0);
  }
  const double top = x.back();
  std::size_t p = 0;
  for (std::size_t i = 0; i < kIntensityPoints; ++i) {
    const double t = top * static_cast<double>(i + 1) / static_cast<double>(kIntensityPoints);
    while (p + 1 < x.size() && x[p] < t - 1e-9)
      ++p;
    if (p == 0 || x[p] <= x[p - 1]) {
      out[i] = y[p];
      continue;
    }
    const double w = std::clamp((t - x[p - 1]) / (x[p] - x[p - 1]), 0.0, 1.0);
    out[i] = y[p - 1] + w * (y[p] - y[p - 1]);
  }
  return out;
}

/// Allocations around the statement, the store's target, the nest.
static ScopeFeatures scope_features(const Group& g, const LoopChain& chain,
                                    const StatementGroups& groups) {
  ScopeFeatures f;
  int innermost_alloc_depth = -1;
  for (const auto& [node, depth] : g.allocs) {
    const double bytes = static_cast<double>(node->buffer.size_bytes());
    (node->buffer.scope == BufferScope::Local ? f.alloc_local_bytes : f.alloc_heap_bytes) += bytes;
    f.alloc_count += 1;
    innermost_alloc_depth = std::max(innermost_alloc_depth, depth);
  }
  if (innermost_alloc_depth >= 0) {
    double p = 1;
    for (int i = 0; i < innermost_alloc_depth; ++i)
      p *= static_cast<double>(g.loops[static_cast<std::size_t>(i)]->extent);
    f.alloc_outer_prod = p;
  }
  const schedule::Buffer* target = groups.find_buffer(g.store->buffer);
  switch (target ? target->scope : BufferScope::Global) {
  case BufferScope::Argument:
    f.store_arg = 1;
    break;
  case BufferScope::Global:
    f.store_heap = 1;
    break;
  case BufferScope::Local:
    f.store_local = 1;
    break;
  }
  f.outer_loop_count = static_cast<double>(chain.size());
  f.outer_loop_prod = chain.product(0, chain.size());
  // Copies that unrolling makes of the statement: the unrolled loops of an
  // unexpanded tree, or the copies merged from an expanded one.
  double copies = 1;
  for (const ChainLoop& c : chain.loops)
    if (c.kind == ForKind::Unrolled)
      copies *= static_cast<double>(c.extent);
  f.unroll_stmts = copies;
  return f;
}

/// The register block: statement instances in it, distinct elements it
/// stores (accumulators, when the store is a reduction), distinct elements it
/// loads from other buffers, FLOPs per such load, and the extent of the
/// serial loop just outside it (what its loop overhead is spread over).
static RegisterBlockFeatures register_block(const LoopChain& chain, const ComputeCounts& ops,
                                            const std::vector<BufferStats>& bufs) {
  std::size_t level = chain.size();
  while (level > 0 && (chain[level - 1].kind == ForKind::Unrolled ||
                       chain[level - 1].kind == ForKind::Vectorized))
    --level;
  const double block = chain.product(level, chain.size());
  const double flops = float_flops(ops);
  double stored = 0, loaded = 0;
  for (const BufferStats& b : bufs) {
    if (b.write)
      stored += b.unique_elems[level];
    else
      loaded += b.unique_elems[level];
  }
  RegisterBlockFeatures f;
  f.reg_block = block;
  f.reg_accumulators = stored;
  f.reg_loads = loaded;
  f.reg_flops_per_load = loaded > 0 ? flops * block / loaded : flops * block;
  f.reg_serial_extent = level > 0 ? static_cast<double>(chain[level - 1].extent) : 0;
  return f;
}

FeatureRow build_row(const Group& g, const StatementGroups& groups, const TouchCounts& touch) {
  const LoopChain chain(g);
  FeatureRow row;
  const ComputeCounts per_execution = ops_per_execution(g);
  row.compute = total_ops(g, chain, per_execution);
  row.vec = annotation(chain, ForKind::Vectorized);
  row.unroll = annotation(chain, ForKind::Unrolled);
  row.par = annotation(chain, ForKind::Parallel);
  const std::vector<BufferStats> bufs = buffer_stats(g, chain, groups, touch);
  fill_buffer_slots(bufs, row.buffers);
  row.arith_intensity = intensity(chain, per_execution, bufs);
  row.scope = scope_features(g, chain, groups);
  row.reg = register_block(chain, per_execution, bufs);
  return row;
}

} // namespace detail

int feature_count() {
  return static_cast<int>(feature_names().size());
}

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = detail::column_names();
  return names;
}

ProgramFeatures extract_features(const schedule::LoweredFunc& func) {
  const detail::StatementGroups groups = detail::group_statements(func);
  const detail::TouchCounts touch = detail::count_touches(groups.groups);
  ProgramFeatures out;
  out.rows.reserve(groups.groups.size());
  for (const detail::Group& g : groups.groups)
    out.rows.push_back(detail::to_columns(detail::build_row(g, groups, touch)));
  return out;
}

} // namespace kiln::model
