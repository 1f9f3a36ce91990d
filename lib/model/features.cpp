// Program features (Ansor's groups) from the lowered loop nest.
//
// The walk has two phases. The first visits every Store and groups the
// statements that are copies of one another: lowering expands unrolled loops
// into copies that differ only in integer constants, and a row per copy would
// both swamp the model (hundreds of rows per program) and hide what Ansor
// sees, an unrolled loop. A group is one row; its copies act as one virtual
// unrolled loop whose extent is the number of copies, placed where the
// copies' loop paths diverge. The second phase computes each row from the
// group's first copy (the representative) and the constants of all copies.
//
// docs/features.md lists every column with its formula.
#include "kiln/model/features.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace kiln::model {

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

namespace {

// --- column layout -----------------------------------------------------------

constexpr int kCacheLineBytes = 64;
constexpr int kBufferSlots = 5;
constexpr int kIntensityPoints = 10;

enum ComputeColumn {
  FloatMad,
  FloatAddSub,
  FloatMul,
  FloatDivMod,
  FloatCmp,
  FloatMath,
  FloatOther,
  IntMad,
  IntAddSub,
  IntMul,
  IntDivMod,
  IntCmp,
  IntOther,
  BoolOp,
  SelectOp,
  kComputeColumns
};

constexpr const char* kComputeNames[kComputeColumns] = {
    "float_mad",  "float_addsub", "float_mul", "float_divmod", "float_cmp",
    "float_math", "float_other",  "int_mad",   "int_addsub",   "int_mul",
    "int_divmod", "int_cmp",      "int_other", "bool_op",      "select"};

// Per annotation kind: count, product, innermost extent, 4-way position.
constexpr int kAnnotationColumns = 7;
constexpr ForKind kAnnotationKinds[3] = {ForKind::Vectorized, ForKind::Unrolled, ForKind::Parallel};
constexpr const char* kAnnotationPrefixes[3] = {"vec", "unroll", "par"};
constexpr const char* kAnnotationSuffixes[kAnnotationColumns] = {
    "num", "prod", "len_inner", "pos_inner", "pos_middle", "pos_outer", "pos_none"};

constexpr int kBufferColumns = 18;
constexpr const char* kBufferSuffixes[kBufferColumns] = {"is_read",
                                                         "is_write",
                                                         "is_read_write",
                                                         "bytes",
                                                         "unique_bytes",
                                                         "lines",
                                                         "unique_lines",
                                                         "reuse_loop",
                                                         "reuse_serial",
                                                         "reuse_none",
                                                         "reuse_dis_iter",
                                                         "reuse_dis_bytes",
                                                         "reuse_ct",
                                                         "bytes_d_reuse_ct",
                                                         "unique_bytes_d_reuse_ct",
                                                         "lines_d_reuse_ct",
                                                         "unique_lines_d_reuse_ct",
                                                         "stride"};

constexpr const char* kTailNames[] = {"alloc_local_bytes", "alloc_heap_bytes", "alloc_count",
                                      "alloc_outer_prod",  "store_arg",        "store_heap",
                                      "store_local",       "outer_loop_count", "outer_loop_prod",
                                      "unroll_stmts"};
constexpr int kTailColumns = sizeof(kTailNames) / sizeof(kTailNames[0]);

// The register block: the innermost run of unrolled and vectorized loops,
// which becomes straight-line vector code, and the serial loop around it.
constexpr const char* kRegisterNames[] = {"reg_block", "reg_accumulators", "reg_loads",
                                          "reg_flops_per_load", "reg_serial_extent"};
constexpr int kRegisterColumns = sizeof(kRegisterNames) / sizeof(kRegisterNames[0]);

constexpr int kAnnotationOffset = kComputeColumns;
constexpr int kBufferOffset = kAnnotationOffset + 3 * kAnnotationColumns;
constexpr int kIntensityOffset = kBufferOffset + kBufferSlots * kBufferColumns;
constexpr int kTailOffset = kIntensityOffset + kIntensityPoints;
constexpr int kRegisterOffset = kTailOffset + kTailColumns;
constexpr int kColumns = kRegisterOffset + kRegisterColumns;

std::vector<std::string> make_names() {
  std::vector<std::string> names;
  for (const char* n : kComputeNames)
    names.emplace_back(n);
  for (int k = 0; k < 3; ++k)
    for (const char* s : kAnnotationSuffixes)
      names.push_back(std::string(kAnnotationPrefixes[k]) + "_" + s);
  for (int b = 0; b < kBufferSlots; ++b)
    for (const char* s : kBufferSuffixes)
      names.push_back("b" + std::to_string(b) + "_" + s);
  for (int i = 0; i < kIntensityPoints; ++i)
    names.push_back("arith_intensity_" + std::to_string(i));
  for (const char* n : kTailNames)
    names.emplace_back(n);
  for (const char* n : kRegisterNames)
    names.emplace_back(n);
  return names;
}

// --- small helpers -------------------------------------------------------------

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  // splitmix64's finaliser over a running combination: cheap and well spread.
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  return h;
}

std::uint64_t hash_str(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

/// x op y as an index of the op language computes it, except that division
/// and modulo by 0 give 0: the evaluators below set variables to 0 or 1, so
/// a divisor made of variables can be 0 at their point.
std::int64_t eval_binary(ir::BinaryOp op, std::int64_t x, std::int64_t y) {
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
    std::int64_t x = eval_index(c->a, one), y = eval_index(c->b, one);
    bool taken = false;
    switch (c->op) {
    case ir::CompareOp::EQ:
      taken = x == y;
      break;
    case ir::CompareOp::NE:
      taken = x != y;
      break;
    case ir::CompareOp::LT:
      taken = x < y;
      break;
    case ir::CompareOp::LE:
      taken = x <= y;
      break;
    case ir::CompareOp::GT:
      taken = x > y;
      break;
    case ir::CompareOp::GE:
      taken = x >= y;
      break;
    }
    return eval_index(taken ? s->t : s->f, one);
  }
  default:
    return 0;
  }
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

  void clear() {
    loads.clear();
    bases.clear();
    consts.clear();
  }

  void store(const std::vector<ir::Expr>& indices) { slot(indices); }

  std::uint64_t hash(const ir::Expr& e) {
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

private:
  void slot(const std::vector<ir::Expr>& indices) {
    const std::size_t base = consts.size();
    consts.resize(base + indices.size());
    for (std::size_t d = 0; d < indices.size(); ++d) {
      const std::int64_t v = index(indices[d]); // may append nested loads' slots
      consts[base + d] = v;
    }
  }

  void load(const ir::Load* l) {
    loads.push_back(l);
    bases.push_back(consts.size());
    slot(l->indices);
  }

  /// The value of an index with every variable at 0; loads inside it (a
  /// gather) are listed and count as 0.
  std::int64_t index(const ir::Expr& e) {
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
};

/// Loop variables and their extents, for interval().
using LoopRanges = std::vector<std::pair<std::string_view, std::int64_t>>;

/// The smallest and largest value of an index when each loop variable ranges
/// over [0, extent); nullopt when it cannot tell. ir::bounds_of does the
/// same through a map of names; this runs for every level of every
/// non-affine index (the div/mod of fused loops), so it scans a short list.
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

/// Counts operations into the compute columns. A multiply feeding an add or
/// subtract of the same class is one multiply-add (an FMA on the host).
class OpCounter : public ir::ExprVisitor {
public:
  explicit OpCounter(std::array<double, kComputeColumns>& counts) : counts_(counts) {}
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
        ++counts_[f ? FloatMad : IntMad];
        visit(mul->a);
        visit(mul->b);
        visit(mul == ma ? b->b : b->a);
        return;
      }
    }
    switch (b->op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
      ++counts_[f ? FloatAddSub : IntAddSub];
      break;
    case ir::BinaryOp::Mul:
      ++counts_[f ? FloatMul : IntMul];
      break;
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Mod:
      ++counts_[f ? FloatDivMod : IntDivMod];
      break;
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max:
      ++counts_[f ? FloatCmp : IntCmp];
      break;
    }
    ExprVisitor::visit(b);
  }
  void visit(const ir::Compare* c) override {
    ++counts_[ir::is_float(c->a.type()) ? FloatCmp : IntCmp];
    ExprVisitor::visit(c);
  }
  void visit(const ir::Logical* l) override {
    ++counts_[BoolOp];
    ExprVisitor::visit(l);
  }
  void visit(const ir::Not* n) override {
    ++counts_[BoolOp];
    ExprVisitor::visit(n);
  }
  void visit(const ir::Select* s) override {
    ++counts_[SelectOp];
    ExprVisitor::visit(s);
  }
  void visit(const ir::Call* c) override {
    ++counts_[c->fn == ir::Intrinsic::Abs ? FloatOther : FloatMath];
    ExprVisitor::visit(c);
  }
  void visit(const ir::Cast* c) override {
    ++counts_[ir::is_float(c->type) ? FloatOther : IntOther];
    ExprVisitor::visit(c);
  }

private:
  std::array<double, kComputeColumns>& counts_;
};

// --- phase 1: statement groups -------------------------------------------------

struct BufferGeom {
  int elem_bytes = 4;
  std::vector<std::int64_t> shape;      ///< per index dimension; "unknown" is huge
  std::vector<std::int64_t> row_stride; ///< elements per step of each dimension
  BufferScope scope = BufferScope::Global;
};

constexpr std::int64_t kUnknownExtent = std::int64_t{1} << 40;

BufferGeom geometry(const Buffer* b, size_t dims) {
  BufferGeom g;
  if (b) {
    g.elem_bytes = std::max(1, ir::bytes(b->dtype));
    g.scope = b->scope;
  }
  g.shape.assign(dims, kUnknownExtent);
  if (b && b->shape.size() == dims)
    for (size_t d = 0; d < dims; ++d)
      g.shape[d] = std::max<std::int64_t>(1, b->shape[d]);
  g.row_stride.assign(dims, 1);
  for (size_t d = dims; d-- > 1;)
    g.row_stride[d - 1] = g.row_stride[d] * std::min(g.shape[d], kUnknownExtent);
  return g;
}

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

struct Group {
  const Store* store = nullptr;
  std::vector<const For*> loops; ///< the representative's loop path, outer first
  std::vector<std::pair<const Allocate*, int>> allocs; ///< with their loop depth
  std::vector<std::pair<const IfThenElse*, int>> ifs;  ///< with their loop depth
  std::vector<Access> accesses;
  std::vector<AccessOffsets> offsets; ///< per access
  int copies = 1;
  size_t prefix = 0; ///< loops shared by every copy (outside the virtual unroll)
};

class GroupBuilder {
public:
  explicit GroupBuilder(const schedule::LoweredFunc& func) {
    for (const Buffer& b : func.args)
      buffers_.emplace(b.name, &b);
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
      buffers_[std::string_view(a->buffer.name)] = &a->buffer;
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

  std::vector<Group>& groups() { return groups_; }
  const Buffer* find_buffer(std::string_view name) const {
    auto it = buffers_.find(name);
    return it == buffers_.end() ? nullptr : it->second;
  }

private:
  void add_store(const Store* st, std::uint64_t ctx) {
    scan_.clear();
    scan_.store(st->indices);
    const std::uint64_t key =
        mix(mix(mix(ctx, hash_str(st->buffer)), scan_.hash(st->value)), st->indices.size());
    auto [it, inserted] = index_.try_emplace(key, static_cast<int>(groups_.size()));
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
      for (size_t a = 0; a < g.accesses.size(); ++a)
        record(g, a, true);
      groups_.push_back(std::move(g));
      return;
    }
    Group& g = groups_[static_cast<size_t>(it->second)];
    // A hash collision between different statements would show here; such a
    // statement still counts as a copy, but its constants are not recorded.
    if (scan_.loads.size() + 1 != g.accesses.size())
      return;
    ++g.copies;
    size_t p = 0;
    while (p < g.prefix && p < loops_.size() && g.loops[p] == loops_[p])
      ++p;
    g.prefix = p;
    for (size_t a = 0; a < g.accesses.size(); ++a)
      record(g, a, false);
  }

  /// Records the constants the scanner found for access `a` of the statement.
  void record(Group& g, size_t a, bool first) {
    AccessOffsets& o = g.offsets[a];
    const size_t dims = a == 0 ? g.store->indices.size() : scan_.loads[a - 1]->indices.size();
    const std::int64_t* consts = scan_.consts.data() + (a == 0 ? 0 : scan_.bases[a - 1]);
    if (first) {
      o.min.assign(dims, std::numeric_limits<std::int64_t>::max());
      o.max.assign(dims, std::numeric_limits<std::int64_t>::min());
      o.rep.assign(consts, consts + dims);
      o.row_stride = geometry(find_buffer(g.accesses[a].buffer), dims).row_stride;
    }
    if (o.min.size() != dims)
      return;
    std::int64_t flat = 0;
    for (size_t d = 0; d < dims; ++d) {
      o.min[d] = std::min(o.min[d], consts[d]);
      o.max[d] = std::max(o.max[d], consts[d]);
      flat += consts[d] * o.row_stride[d];
    }
    o.flat.push_back(flat);
  }

  std::unordered_map<std::string_view, const Buffer*> buffers_; ///< names live in the tree
  std::unordered_map<std::uint64_t, int> index_;
  std::vector<Group> groups_;
  std::vector<const For*> loops_;
  std::vector<std::pair<const Allocate*, int>> allocs_;
  std::vector<std::pair<const IfThenElse*, int>> ifs_;
  Scanner scan_;
};

/// Floating-point operations of one execution, a multiply-add counting two.
double float_flops(const std::array<double, kComputeColumns>& ops) {
  return 2 * ops[FloatMad] + ops[FloatAddSub] + ops[FloatMul] + ops[FloatDivMod] + ops[FloatCmp] +
         ops[FloatMath];
}

// --- phase 2: one row per group ------------------------------------------------

/// A loop of a row's nest; the virtual one stands for the unrolled copies.
struct ChainLoop {
  const std::string* var = nullptr; ///< nullptr for the virtual loop
  std::int64_t extent = 1;
  ForKind kind = ForKind::Serial;
  bool virtual_loop = false;
};

/// Everything about one buffer of a statement that the columns need.
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
  // Per level l (0..n): unique elements touched by the loops l..n-1.
  std::vector<double> unique_elems, unique_lines;
  // Columns.
  double bytes = 0, lines = 0;
  int reuse_type = 2; ///< 0 loop, 1 serial, 2 none
  double reuse_dis_iter = 0, reuse_dis_bytes = 0, reuse_ct = 0;
  double innermost_stride = 0;
};

struct RowBuilder {
  const Group& g;
  const GroupBuilder& gb;
  /// (For node or nullptr for the root, buffer) -> groups touching it.
  const std::map<std::pair<const For*, std::string_view>, int>& touch;

  std::vector<ChainLoop> chain;
  int virtual_pos = -1; ///< index of the virtual loop in chain, -1 when none

  void build_chain() {
    for (size_t i = 0; i < g.loops.size(); ++i) {
      if (i == g.prefix && g.copies > 1) {
        virtual_pos = static_cast<int>(chain.size());
        chain.push_back({nullptr, g.copies, ForKind::Unrolled, true});
      }
      const For* f = g.loops[i];
      chain.push_back({&f->var, f->extent, f->for_kind, false});
    }
    if (g.copies > 1 && virtual_pos < 0) {
      virtual_pos = static_cast<int>(chain.size());
      chain.push_back({nullptr, g.copies, ForKind::Unrolled, true});
    }
  }

  /// Chain index of the representative's loop `i`.
  int chain_index(size_t i) const {
    return static_cast<int>(i) + (virtual_pos >= 0 && static_cast<int>(i) >= virtual_pos ? 1 : 0);
  }

  double product(size_t from, size_t to) const {
    double p = 1;
    for (size_t j = from; j < to; ++j)
      p *= static_cast<double>(chain[j].extent);
    return p;
  }

  std::vector<BufferStats> buffer_stats() {
    std::vector<BufferStats> out;
    for (size_t a = 0; a < g.accesses.size(); ++a) {
      const Access& acc = g.accesses[a];
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const BufferStats& b) { return b.name == acc.buffer; });
      if (it == out.end()) {
        BufferStats b;
        b.name = acc.buffer;
        b.indices = acc.indices;
        const size_t dims = acc.indices->size();
        b.geom = geometry(gb.find_buffer(acc.buffer), dims);
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
    const size_t dims = b.indices->size();
    std::vector<std::int64_t> rep_min(dims, std::numeric_limits<std::int64_t>::max());
    std::vector<std::int64_t> rep_max(dims, std::numeric_limits<std::int64_t>::min());
    std::vector<std::int64_t> all_min = rep_min, all_max = rep_max;
    std::vector<std::int64_t> rep_flat, all_flat;
    for (size_t a = 0; a < g.accesses.size(); ++a) {
      const AccessOffsets& o = g.offsets[a];
      if (g.accesses[a].buffer != b.name || o.rep.size() != dims)
        continue;
      for (size_t d = 0; d < dims; ++d) {
        rep_min[d] = std::min(rep_min[d], o.rep[d]);
        rep_max[d] = std::max(rep_max[d], o.rep[d]);
        all_min[d] = std::min(all_min[d], o.min[d]);
        all_max[d] = std::max(all_max[d], o.max[d]);
      }
      if (!o.flat.empty())
        rep_flat.push_back(o.flat.front());
      all_flat.insert(all_flat.end(), o.flat.begin(), o.flat.end());
    }
    for (size_t d = 0; d < dims; ++d) {
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

  void strides(BufferStats& b) {
    const size_t dims = b.indices->size();
    b.stride.assign(chain.size(), 0);
    b.coef.assign(dims, std::vector<double>(chain.size(), 0.0));
    for (size_t j = 0; j < chain.size(); ++j) {
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
      for (size_t d = 0; d < dims; ++d) {
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
  std::vector<double> spans(const BufferStats& b, size_t l) const {
    const size_t dims = b.indices->size();
    std::vector<double> span(dims, 1);
    LoopRanges ranges; // only for non-affine indices
    bool ranges_ready = false;
    for (size_t d = 0; d < dims; ++d) {
      double s = 1;
      if (b.forms[d]) {
        for (size_t j = l; j < chain.size(); ++j)
          s += b.coef[d][j] * static_cast<double>(chain[j].extent - 1);
      } else {
        if (!ranges_ready) {
          for (size_t j = 0; j < chain.size(); ++j)
            if (!chain[j].virtual_loop)
              ranges.push_back({*chain[j].var, j >= l ? chain[j].extent : 1});
          ranges_ready = true;
        }
        auto range = interval((*b.indices)[d], ranges);
        s = range ? static_cast<double>(range->max - range->min + 1)
                  : static_cast<double>(b.geom.shape[d]);
      }
      const bool virtual_inside = virtual_pos >= 0 && static_cast<size_t>(virtual_pos) >= l;
      s += static_cast<double>(virtual_inside ? b.spread_all[d] : b.spread_rep[d]);
      span[d] = std::clamp(s, 1.0, static_cast<double>(b.geom.shape[d]));
    }
    return span;
  }

  /// Unique elements and 64-byte lines of a box: the innermost dimensions
  /// that cover the whole buffer extent join the next one in a contiguous run.
  static std::pair<double, double> footprint(const BufferStats& b,
                                             const std::vector<double>& span) {
    if (span.empty())
      return {1, 1};
    double elems = 1;
    for (double s : span)
      elems *= s;
    size_t k = span.size() - 1;
    double run = span[k];
    while (k > 0 && span[k] >= static_cast<double>(b.geom.shape[k])) {
      --k;
      run *= span[k];
    }
    double lines_per_run = std::ceil(run * b.geom.elem_bytes / kCacheLineBytes);
    return {elems, (elems / run) * lines_per_run};
  }

  void footprints(BufferStats& b) {
    b.unique_elems.assign(chain.size() + 1, 1);
    b.unique_lines.assign(chain.size() + 1, 1);
    for (size_t l = 0; l <= chain.size(); ++l) {
      auto [elems, lines] = footprint(b, spans(b, l));
      b.unique_elems[l] = elems;
      b.unique_lines[l] = lines;
    }
  }

  /// Lines touched over the whole run, as in Ansor: inner loops in which the
  /// access is invariant touch no new line; the first loop that moves it
  /// moves `stride` elements per iteration.
  void traffic(BufferStats& b) {
    const double all = product(0, chain.size());
    b.bytes = all * b.accesses * b.geom.elem_bytes;
    b.lines = 1;
    for (size_t j = chain.size(); j-- > 0;) {
      if (b.stride[j] == 0)
        continue;
      double moves = 1;
      for (size_t i = 0; i < j; ++i)
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

  void reuse(BufferStats& b, const std::vector<BufferStats>& all) {
    auto bytes_at = [&](size_t level) {
      double s = 0;
      for (const BufferStats& o : all)
        s += o.unique_elems[level] * o.geom.elem_bytes;
      return s;
    };
    // Loop multiple read: the innermost loop that does not move the access.
    for (size_t j = chain.size(); j-- > 0;) {
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
      b.reuse_type = 0;
      b.reuse_ct = ct;
      b.reuse_dis_iter = product(j + 1, chain.size());
      b.reuse_dis_bytes = bytes_at(j + 1);
      return;
    }
    // Serial multiple read/write: another statement in a shared loop touches
    // the same buffer.
    for (size_t i = g.loops.size() + 1; i-- > 0;) {
      const For* f = i == 0 ? nullptr : g.loops[i - 1];
      auto it = touch.find({f, b.name});
      if (it == touch.end() || it->second < 2)
        continue;
      const size_t inner = i == 0 ? 0 : static_cast<size_t>(chain_index(i - 1)) + 1;
      b.reuse_type = 1;
      b.reuse_ct = it->second;
      b.reuse_dis_iter = product(inner, chain.size());
      b.reuse_dis_bytes = bytes_at(inner);
      return;
    }
  }

  std::vector<float> row() {
    build_chain();
    std::vector<double> v(kColumns, 0.0);
    const double all = product(0, chain.size());

    // Compute: per copy, times every execution; guards once per iteration of
    // the loops around them.
    std::array<double, kComputeColumns> ops{};
    OpCounter counter(ops);
    counter.visit(g.store->value);
    for (const ir::Expr& e : g.store->indices)
      counter.visit(e);
    for (size_t c = 0; c < kComputeColumns; ++c)
      v[c] = ops[c] * all;
    for (const auto& [node, depth] : g.ifs) {
      std::array<double, kComputeColumns> guard{};
      OpCounter gc(guard);
      gc.visit(node->cond);
      const double times =
          product(0, static_cast<size_t>(depth > 0 ? chain_index(depth - 1) + 1 : 0));
      for (size_t c = 0; c < kComputeColumns; ++c)
        v[c] += guard[c] * times;
    }

    // Annotations.
    for (int k = 0; k < 3; ++k) {
      double num = 0, prod = 1, inner = 0;
      int inner_pos = -1;
      for (size_t j = 0; j < chain.size(); ++j) {
        if (chain[j].kind != kAnnotationKinds[k])
          continue;
        ++num;
        prod *= static_cast<double>(chain[j].extent);
        inner = static_cast<double>(chain[j].extent);
        inner_pos = static_cast<int>(j);
      }
      double* col = &v[kAnnotationOffset + k * kAnnotationColumns];
      col[0] = num;
      col[1] = num > 0 ? prod : 0;
      col[2] = inner;
      const int last = static_cast<int>(chain.size()) - 1;
      if (inner_pos < 0)
        col[6] = 1;
      else if (inner_pos == last)
        col[3] = 1;
      else if (inner_pos == 0)
        col[5] = 1;
      else
        col[4] = 1;
    }

    // Buffer accesses.
    std::vector<BufferStats> bufs = buffer_stats();
    for (BufferStats& b : bufs) {
      strides(b);
      footprints(b);
      traffic(b);
    }
    for (BufferStats& b : bufs)
      reuse(b, bufs);
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
    for (size_t slot = 0; slot < order.size() && slot < kBufferSlots; ++slot) {
      const BufferStats& b = *order[slot];
      double* col = &v[kBufferOffset + slot * kBufferColumns];
      col[0] = b.read && !b.write;
      col[1] = b.write && !b.read;
      col[2] = b.read && b.write;
      col[3] = b.bytes;
      col[4] = b.unique_elems[0] * b.geom.elem_bytes;
      col[5] = b.lines;
      col[6] = b.unique_lines[0];
      col[7 + b.reuse_type] = 1;
      col[10] = b.reuse_dis_iter;
      col[11] = b.reuse_dis_bytes;
      col[12] = b.reuse_ct;
      const double ct = std::max(1.0, b.reuse_ct);
      col[13] = col[3] / ct;
      col[14] = col[4] / ct;
      col[15] = col[5] / ct;
      col[16] = col[6] / ct;
      col[17] = b.innermost_stride;
    }

    intensity(ops, bufs, &v[kIntensityOffset]);

    // Allocations around the statement, the store's target, the nest.
    double* tail = &v[kTailOffset];
    int innermost_alloc_depth = -1;
    for (const auto& [node, depth] : g.allocs) {
      const double bytes = static_cast<double>(node->buffer.size_bytes());
      (node->buffer.scope == BufferScope::Local ? tail[0] : tail[1]) += bytes;
      tail[2] += 1;
      innermost_alloc_depth = std::max(innermost_alloc_depth, depth);
    }
    if (innermost_alloc_depth >= 0) {
      double p = 1;
      for (int i = 0; i < innermost_alloc_depth; ++i)
        p *= static_cast<double>(g.loops[static_cast<size_t>(i)]->extent);
      tail[3] = p;
    }
    const Buffer* target = gb.find_buffer(g.store->buffer);
    const BufferScope scope = target ? target->scope : BufferScope::Global;
    tail[4 + static_cast<int>(scope)] = 1;
    tail[7] = static_cast<double>(chain.size());
    tail[8] = all;
    // Copies that unrolling makes of the statement: the unrolled loops of an
    // unexpanded tree, or the copies merged from an expanded one.
    double copies = 1;
    for (const ChainLoop& c : chain)
      if (c.kind == ForKind::Unrolled)
        copies *= static_cast<double>(c.extent);
    tail[9] = copies;

    register_block(ops, bufs, &v[kRegisterOffset]);

    std::vector<float> out(kColumns);
    for (int c = 0; c < kColumns; ++c)
      out[static_cast<size_t>(c)] = static_cast<float>(std::log2(1.0 + std::max(0.0, v[c])));
    return out;
  }

  /// The register block (see kRegisterNames): statement instances in it,
  /// distinct elements it stores (accumulators, when the store is a
  /// reduction), distinct elements it loads from other buffers, FLOPs per
  /// such load, and the extent of the serial loop just outside it (what its
  /// loop overhead is spread over).
  void register_block(const std::array<double, kComputeColumns>& ops,
                      const std::vector<BufferStats>& bufs, double* out) const {
    size_t level = chain.size();
    while (level > 0 && (chain[level - 1].kind == ForKind::Unrolled ||
                         chain[level - 1].kind == ForKind::Vectorized))
      --level;
    const double block = product(level, chain.size());
    const double flops = float_flops(ops);
    double stored = 0, loaded = 0;
    for (const BufferStats& b : bufs) {
      if (b.write)
        stored += b.unique_elems[level];
      else
        loaded += b.unique_elems[level];
    }
    out[0] = block;
    out[1] = stored;
    out[2] = loaded;
    out[3] = loaded > 0 ? flops * block / loaded : flops * block;
    out[4] = level > 0 ? static_cast<double>(chain[level - 1].extent) : 0;
  }

  /// FLOPs per byte of unique data at every level of the nest from the
  /// statement outwards, resampled at ten points evenly spaced in log2(FLOPs)
  /// (Ansor's curve).
  void intensity(const std::array<double, kComputeColumns>& ops,
                 const std::vector<BufferStats>& bufs, double* out) const {
    const double flops = float_flops(ops);
    if (flops <= 0)
      return;
    std::vector<double> x, y; // log2 FLOPs and intensity, inner to outer
    for (size_t l = chain.size() + 1; l-- > 0;) {
      double f = flops * product(l, chain.size());
      double bytes = 0;
      for (const BufferStats& b : bufs)
        bytes += b.unique_elems[l] * b.geom.elem_bytes;
      x.push_back(std::log2(f));
      y.push_back(bytes > 0 ? f / bytes : 0);
    }
    const double top = x.back();
    size_t p = 0;
    for (int i = 0; i < kIntensityPoints; ++i) {
      const double t = top * (i + 1) / kIntensityPoints;
      while (p + 1 < x.size() && x[p] < t - 1e-9)
        ++p;
      if (p == 0 || x[p] <= x[p - 1]) {
        out[i] = y[p];
        continue;
      }
      const double w = std::clamp((t - x[p - 1]) / (x[p] - x[p - 1]), 0.0, 1.0);
      out[i] = y[p - 1] + w * (y[p] - y[p - 1]);
    }
  }
};

} // namespace

int feature_count() {
  return kColumns;
}

const std::vector<std::string>& feature_names() {
  static const std::vector<std::string> names = make_names();
  return names;
}

ProgramFeatures extract_features(const schedule::LoweredFunc& func) {
  GroupBuilder gb(func);
  gb.walk(func.body, 0);
  std::vector<Group>& groups = gb.groups();

  // Which groups touch each buffer under each loop (nullptr: the kernel), for
  // serial reuse. Loops inside the copies are counted once per group.
  std::map<std::pair<const For*, std::string_view>, int> touch;
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

  ProgramFeatures out;
  out.rows.reserve(groups.size());
  for (const Group& g : groups) {
    RowBuilder rb{g, gb, touch, {}, -1};
    out.rows.push_back(rb.row());
  }
  return out;
}

} // namespace kiln::model
