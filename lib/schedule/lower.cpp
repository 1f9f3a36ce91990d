#include "kiln/schedule/lower.h"

#include "passes.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/linear_form.h"
#include "kiln/ir/printer.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace kiln::schedule {

using ir::Expr;

std::string kernel_name(const ir::ComputeDAG& dag) {
  std::string name = "kiln_";
  for (char c : dag.name())
    name += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return name;
}

Buffer stage_buffer(const ir::Stage& stage, BufferScope scope) {
  return Buffer{stage.name, stage.dtype, stage.shape(), scope};
}

Expr reduce_identity(ir::ReduceOp op, ir::ScalarType type) {
  if (op == ir::ReduceOp::Sum)
    return ir::is_float(type) ? ir::FloatImm::make(0.0, type) : ir::IntImm::make(0, type);
  bool is_max = op == ir::ReduceOp::Max;
  if (ir::is_float(type))
    return ir::FloatImm::make(is_max ? -std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::infinity(),
                              type);
  if (type == ir::ScalarType::I32)
    return ir::IntImm::make(is_max ? std::numeric_limits<std::int32_t>::min()
                                   : std::numeric_limits<std::int32_t>::max(),
                            type);
  return ir::IntImm::make(is_max ? std::numeric_limits<std::int64_t>::min()
                                 : std::numeric_limits<std::int64_t>::max(),
                          type);
}

Expr reduce_combine(ir::ReduceOp op, Expr acc, Expr value) {
  switch (op) {
  case ir::ReduceOp::Sum:
    return acc + value;
  case ir::ReduceOp::Max:
    return ir::max(acc, value);
  case ir::ReduceOp::Min:
    return ir::min(acc, value);
  }
  return acc;
}

namespace {

/// Local buffers above this size go to the heap instead of the stack.
constexpr std::int64_t kMaxStackBufferBytes = 256 << 10;

/// Where a stage's values live in its buffer: element `axis` of the stage is
/// at buffer index `axis - base` (base is 0 for stages at the root; for a
/// stage computed at a loop it is where the region read by one iteration of
/// that loop starts).
struct Region {
  std::vector<Expr> base;
  std::vector<std::int64_t> extent;
};

/// Collects the index lists of every load of one tensor.
class LoadFinder : public ir::ExprVisitor {
public:
  explicit LoadFinder(std::string tensor) : tensor_(std::move(tensor)) {}
  std::vector<std::vector<Expr>> found;
  using ExprVisitor::visit;
  void visit(const ir::Load* l) override {
    if (l->tensor == tensor_)
      found.push_back(l->indices);
    ExprVisitor::visit(l);
  }

private:
  std::string tensor_;
};

/// Subtracts each attached stage's region base from the indices of its loads.
class RegionRebaser : public ir::ExprMutator {
public:
  explicit RegionRebaser(const std::map<std::string, Region>& regions) : regions_(regions) {}
  using ExprMutator::mutate;

protected:
  Expr mutate(const ir::Load* l, const Expr& self) override {
    Expr e = ExprMutator::mutate(l, self);
    const auto* load = e.as<ir::Load>();
    auto it = regions_.find(load->tensor);
    if (it == regions_.end())
      return e;
    std::vector<Expr> indices;
    for (size_t d = 0; d < load->indices.size(); ++d)
      indices.push_back(is_zero(it->second.base[d]) ? load->indices[d]
                                                    : load->indices[d] - it->second.base[d]);
    return ir::Load::make(load->tensor, std::move(indices), load->type);
  }

private:
  static bool is_zero(const Expr& e) {
    const auto* i = e.as<ir::IntImm>();
    return i && i->value == 0;
  }
  const std::map<std::string, Region>& regions_;
};

/// An expression split into an affine part over some variables plus a rest
/// that does not use them; nullopt when the variables appear otherwise.
struct Decomposed {
  ir::LinearForm inner;
  Expr rest;
};

static bool uses_any(const Expr& e, const std::set<std::string>& vars) {
  class Uses : public ir::ExprVisitor {
  public:
    explicit Uses(const std::set<std::string>& v) : vars(v) {}
    const std::set<std::string>& vars;
    bool found = false;
    using ExprVisitor::visit;
    void visit(const ir::Var* v) override { found |= vars.count(v->name) > 0; }
  } u(vars);
  u.visit(e);
  return u.found;
}

static std::optional<Decomposed> decompose(const Expr& e, const std::set<std::string>& vars) {
  if (!uses_any(e, vars))
    return Decomposed{{}, e};
  if (const auto* v = e.as<ir::Var>())
    return Decomposed{ir::LinearForm{{{v->name, 1}}, 0}, Expr(0)};
  if (const auto* c = e.as<ir::Cast>())
    return ir::is_int(c->value.type()) ? decompose(c->value, vars) : std::nullopt;
  const auto* b = e.as<ir::Binary>();
  if (!b)
    return std::nullopt;
  auto x = decompose(b->a, vars), y = decompose(b->b, vars);
  if (!x || !y)
    return std::nullopt;
  switch (b->op) {
  case ir::BinaryOp::Add:
    return Decomposed{ir::added(std::move(x->inner), y->inner, 1), x->rest + y->rest};
  case ir::BinaryOp::Sub:
    return Decomposed{ir::added(std::move(x->inner), y->inner, -1), x->rest - y->rest};
  case ir::BinaryOp::Mul: {
    // Only a constant factor keeps the inner part affine.
    const Decomposed* var_side = x->inner.coeffs.empty() ? &*y : &*x;
    const Decomposed* const_side = var_side == &*x ? &*y : &*x;
    auto k = ir::linearize(const_side->rest);
    if (!const_side->inner.coeffs.empty() || !k || !k->coeffs.empty())
      return std::nullopt;
    return Decomposed{ir::scaled(var_side->inner, k->constant), var_side->rest * Expr(k->constant)};
  }
  case ir::BinaryOp::Div:
  case ir::BinaryOp::Mod:
  case ir::BinaryOp::Min:
  case ir::BinaryOp::Max:
    return std::nullopt;
  }
  return std::nullopt;
}

/// Builds the loop nest of one stage and, inside it, of the stages computed
/// at its loops.
class NestBuilder {
public:
  NestBuilder(const State& state) : state_(state), dag_(state.dag()) {
    std::map<std::string, const ir::Stage*> inlined;
    for (size_t i = 0; i < dag_.stages().size(); ++i) {
      const ir::Stage& s = dag_.stage(static_cast<int>(i));
      const StageState& st = state.stages()[i];
      Expr body = ir::inline_stages(s.body, inlined);
      bodies_.push_back(body);
      if (st.location == Location::Inline) {
        ir::Stage& stored = inlined_storage_[s.name] = s;
        stored.body = body;
        inlined[s.name] = &stored;
      }
      if (st.location == Location::At)
        attached_[{st.at_stage, st.at_iter}].push_back(static_cast<int>(i));
    }
  }

  Stmt build_root() {
    Stmt body;
    for (size_t i = dag_.stages().size(); i-- > 0;) {
      const ir::Stage& s = dag_.stage(static_cast<int>(i));
      const StageState& st = state_.stages()[i];
      if (s.is_placeholder() || st.location != Location::Root)
        continue;
      Region full;
      for (const ir::IterVar& a : s.axes) {
        full.base.push_back(Expr(0));
        full.extent.push_back(a.extent);
      }
      Stmt here = Block::make({build_stage(static_cast<int>(i), full, {}), body});
      body = s.is_output ? here : Allocate::make(stage_buffer(s, BufferScope::Global), here);
    }
    return body;
  }

private:
  using Scope = std::map<std::string, std::int64_t>; // loop var → extent

  /// The loops of one stage over `region`, with `scope` the enclosing loops.
  Stmt build_stage(int index, const Region& region, Scope scope) {
    const ir::Stage& stage = dag_.stage(index);
    const StageState& st = state_.stages()[index];
    const bool attached = st.location == Location::At;
    const std::string prefix = attached ? stage.name + "." : "";
    // The body with the inlined stages substituted: for a reduction, its
    // Reduce node is the rebuilt one (the stage's own still loads them).
    Expr body = bodies_[index];
    const ir::Reduce* reduce = body.as<ir::Reduce>();

    // Extents of every iterator, from the region through the relations.
    std::map<std::string, std::int64_t> extent;
    for (size_t d = 0; d < stage.axes.size(); ++d)
      extent[stage.axes[d].name] = region.extent[d];
    if (reduce)
      for (const ir::IterVar& a : reduce->axes)
        extent[a.name] = a.extent;
    std::vector<Expr> guards;
    for (const Relation& rel : st.relations) {
      if (const auto* split = std::get_if<SplitRelation>(&rel)) {
        std::int64_t parent = extent.at(split->parent);
        std::int64_t inner = std::accumulate(split->factors.begin(), split->factors.end(),
                                             std::int64_t{1}, std::multiplies<>());
        std::int64_t outer = (parent + inner - 1) / inner;
        extent[split->children[0]] = outer;
        for (size_t i = 0; i < split->factors.size(); ++i)
          extent[split->children[i + 1]] = split->factors[i];
        continue;
      }
      const auto& fuse = std::get<FuseRelation>(rel);
      std::int64_t product = 1;
      for (const std::string& p : fuse.parents)
        product *= extent.at(p);
      extent[fuse.child] = product;
    }

    // Values of every iterator in terms of the loop variables, back through
    // the relations; a split with a tail guards its parent.
    // A loop of extent 1 is no loop: its variable is 0 from the start, so
    // no pass has to rewrite every statement inside it (sketch configs have
    // many unit tile levels).
    std::map<std::string, Expr> value;
    for (const Iterator& it : st.iters)
      value[it.name] = extent.at(it.name) == 1 ? Expr(0) : ir::Var::make(prefix + it.name);
    for (size_t r = st.relations.size(); r-- > 0;) {
      const Relation& rel = st.relations[r];
      if (const auto* split = std::get_if<SplitRelation>(&rel)) {
        Expr v;
        std::int64_t stride = 1;
        for (size_t c = split->children.size(); c-- > 0;) {
          const Expr& child = value.at(split->children[c]);
          if (!is_zero(child)) {
            Expr term = stride == 1 ? child : child * Expr(stride);
            v = v.defined() ? term + v : term;
          }
          stride *= extent.at(split->children[c]);
        }
        if (!v.defined())
          v = Expr(0);
        value[split->parent] = v;
        if (stride != extent.at(split->parent))
          guards.push_back(v < Expr(extent.at(split->parent)));
        continue;
      }
      const auto& fuse = std::get<FuseRelation>(rel);
      std::int64_t inner = 1;
      for (size_t p = fuse.parents.size(); p-- > 0;) {
        Expr v = value.at(fuse.child);
        if (is_zero(v)) {
          value[fuse.parents[p]] = v;
          continue;
        }
        if (inner != 1)
          v = v / Expr(inner);
        if (p != 0)
          v = v % Expr(extent.at(fuse.parents[p]));
        value[fuse.parents[p]] = v;
        inner *= extent.at(fuse.parents[p]);
      }
    }

    // Element coordinates: region base + position in the region. A region
    // that may run past the stage's extent (a tail of the consumer) is
    // guarded unless bounds prove it cannot.
    Scope all = scope;
    for (const Iterator& it : st.iters)
      all[prefix + it.name] = extent.at(it.name);
    std::vector<std::pair<std::string, Expr>> coords;
    std::vector<Expr> store_index;
    for (size_t d = 0; d < stage.axes.size(); ++d) {
      const ir::IterVar& a = stage.axes[d];
      Expr pos = value.at(a.name);
      Expr coord = is_zero(region.base[d]) ? pos : region.base[d] + pos;
      coords.emplace_back(a.name, coord);
      store_index.push_back(attached ? pos : coord);
      if (attached || region.extent[d] != a.extent) {
        auto b = ir::bounds_of(coord, all);
        if (!b || b->min < 0 || b->max >= a.extent)
          guards.push_back(ir::logical_and(coord >= Expr(0), coord < Expr(a.extent)));
      }
    }
    if (reduce)
      for (const ir::IterVar& a : reduce->axes)
        coords.emplace_back(a.name, value.at(a.name));

    // Regions of the stages computed inside this one, from this stage's reads.
    Expr element = ir::substitute(reduce ? reduce->body : body, coords);
    for (const auto& [key, children] : attached_)
      if (key.first == stage.name)
        for (int child : children)
          regions_[dag_.stage(child).name] =
              infer_region(child, element, st, prefix, key.second, extent);
    element = RegionRebaser(regions_).mutate(element);

    // Statements: the store, and for a reduction its init and update, in
    // simplified form (see simplify_expr).
    for (Expr& i : store_index)
      i = simplify_expr(i);
    element = simplify_expr(element);
    for (Expr& g : guards)
      g = simplify_expr(g);
    Stmt store, init;
    if (reduce) {
      Expr acc = ir::Load::make(stage.name, store_index, stage.dtype);
      store = Store::make(stage.name, store_index, reduce_combine(reduce->op, acc, element));
      init = Store::make(stage.name, store_index, reduce_identity(reduce->op, stage.dtype));
    } else {
      store = Store::make(stage.name, store_index, element);
    }

    // Guards go right inside the innermost loop they depend on.
    std::vector<int> guard_level;
    for (const Expr& g : guards) {
      int level = -1;
      for (size_t i = 0; i < st.iters.size(); ++i)
        if (uses_any(g, {prefix + st.iters[i].name}))
          level = static_cast<int>(i);
      guard_level.push_back(level);
    }

    LoopContext ctx{stage, st, prefix, extent, guards, guard_level, store, init, scope};
    Stmt nest = wrap_guards(ctx, -1, build_loops(ctx, 0, false), false);
    if (st.auto_unroll_max_step > 0)
      nest = mark_auto_unroll(nest, st.auto_unroll_max_step);
    return nest;
  }

  struct LoopContext {
    const ir::Stage& stage;
    const StageState& st;
    const std::string& prefix;
    const std::map<std::string, std::int64_t>& extent;
    const std::vector<Expr>& guards;
    const std::vector<int>& guard_level;
    Stmt store, init;
    Scope scope;
  };

  static ForKind kind_of(Annotation a) {
    switch (a) {
    case Annotation::None:
      return ForKind::Serial;
    case Annotation::Parallel:
      return ForKind::Parallel;
    case Annotation::Vectorize:
      return ForKind::Vectorized;
    case Annotation::Unroll:
      return ForKind::Unrolled;
    }
    return ForKind::Serial;
  }

  /// Wraps `body` in the guards placed at `level`; for the init nest only
  /// guards that do not mention reduction loops.
  Stmt wrap_guards(const LoopContext& ctx, int level, Stmt body, bool init_only) {
    for (size_t g = ctx.guards.size(); g-- > 0;) {
      if (ctx.guard_level[g] != level)
        continue;
      if (init_only && mentions_reduce(ctx, ctx.guards[g]))
        continue;
      body = IfThenElse::make(ctx.guards[g], body);
    }
    return body;
  }

  bool mentions_reduce(const LoopContext& ctx, const Expr& e) {
    std::set<std::string> reduce_vars;
    for (const Iterator& it : ctx.st.iters)
      if (it.kind == IterKind::Reduce)
        reduce_vars.insert(ctx.prefix + it.name);
    return uses_any(e, reduce_vars);
  }

  /// The loops from position `pos` inward. The init of a reduction goes
  /// right before its outermost reduction loop, over the spatial loops
  /// inside that point.
  Stmt build_loops(LoopContext& ctx, size_t pos, bool in_reduce) {
    const auto& iters = ctx.st.iters;
    if (pos == iters.size())
      return ctx.store;
    const Iterator& it = iters[pos];
    if (ctx.init.defined() && !in_reduce && it.kind == IterKind::Reduce) {
      Stmt init = build_init(ctx, pos);
      return Block::make({init, build_loops(ctx, pos, true)});
    }
    std::string var = ctx.prefix + it.name;
    std::int64_t extent = ctx.extent.at(it.name);
    ctx.scope[var] = extent;
    Stmt body = build_loops(ctx, pos + 1, in_reduce);
    body = wrap_guards(ctx, static_cast<int>(pos), body, false);
    body = attach_children(ctx, it.name, body);
    ctx.scope.erase(var);
    return extent == 1 ? body : For::make(var, extent, kind_of(it.annotation), body);
  }

  /// The init of a reduction: the spatial loops from `pos` inward.
  Stmt build_init(const LoopContext& ctx, size_t pos) {
    const auto& iters = ctx.st.iters;
    Stmt body = ctx.init;
    for (size_t i = iters.size(); i-- > pos;) {
      if (iters[i].kind != IterKind::Spatial)
        continue;
      body = wrap_guards(ctx, static_cast<int>(i), body, true);
      std::int64_t extent = ctx.extent.at(iters[i].name);
      if (extent != 1)
        body = For::make(ctx.prefix + iters[i].name, extent, kind_of(iters[i].annotation), body);
    }
    return body;
  }

  /// The stages computed at loop `iter` of this stage go first in its body,
  /// each in a buffer the size of its region.
  Stmt attach_children(const LoopContext& ctx, const std::string& iter, Stmt body) {
    auto it = attached_.find({ctx.stage.name, iter});
    if (it == attached_.end())
      return body;
    for (size_t c = it->second.size(); c-- > 0;) {
      int child = it->second[c];
      const ir::Stage& s = dag_.stage(child);
      const Region& region = regions_.at(s.name);
      Buffer buf{s.name, s.dtype, region.extent, BufferScope::Local};
      if (buf.size_bytes() > kMaxStackBufferBytes)
        buf.scope = BufferScope::Global;
      body = Allocate::make(buf, Block::make({build_stage(child, region, ctx.scope), body}));
    }
    return body;
  }

  /// The region of stage `child` that one iteration of loop `at` of its
  /// consumer reads: each index is affine in the loops inside `at` (which
  /// range over their extents) plus a rest fixed for that iteration. When
  /// reads disagree or are not affine, the whole stage; a dimension whose
  /// span covers the stage's extent is computed whole.
  Region infer_region(int child, const Expr& element, const StageState& consumer,
                      const std::string& prefix, const std::string& at,
                      const std::map<std::string, std::int64_t>& extent) {
    const ir::Stage& s = dag_.stage(child);
    Region full;
    for (const ir::IterVar& a : s.axes) {
      full.base.push_back(Expr(0));
      full.extent.push_back(a.extent);
    }
    std::set<std::string> inner;
    std::map<std::string, std::int64_t> inner_extent;
    bool below = false;
    for (const Iterator& it : consumer.iters) {
      if (below) {
        inner.insert(prefix + it.name);
        inner_extent[prefix + it.name] = extent.at(it.name);
      }
      below |= it.name == at;
    }
    LoadFinder finder(s.name);
    finder.visit(element);
    if (finder.found.empty())
      return full;
    Region region;
    for (size_t d = 0; d < s.axes.size(); ++d) {
      std::optional<Expr> rest;
      std::int64_t lo = std::numeric_limits<std::int64_t>::max();
      std::int64_t hi = std::numeric_limits<std::int64_t>::min();
      for (const auto& indices : finder.found) {
        auto dec = decompose(indices[d], inner);
        if (!dec)
          return full;
        if (rest && !ir::equal(*rest, dec->rest))
          return full;
        rest = dec->rest;
        std::int64_t mn = dec->inner.constant, mx = dec->inner.constant;
        for (const auto& [v, c] : dec->inner.coeffs) {
          std::int64_t span = c * (inner_extent.at(v) - 1);
          mn += std::min<std::int64_t>(0, span);
          mx += std::max<std::int64_t>(0, span);
        }
        lo = std::min(lo, mn);
        hi = std::max(hi, mx);
      }
      std::int64_t ext = hi - lo + 1;
      if (ext >= s.axes[d].extent) {
        // This dimension is read whole; the others may still shrink.
        region.base.push_back(Expr(0));
        region.extent.push_back(s.axes[d].extent);
        continue;
      }
      Expr base = lo == 0 ? *rest : *rest + Expr(lo);
      auto simple = ir::linearize(base);
      region.base.push_back(simple ? ir::to_expr(*simple) : base);
      region.extent.push_back(ext);
    }
    return region;
  }

  static bool is_zero(const Expr& e) {
    const auto* i = e.as<ir::IntImm>();
    return i && i->value == 0;
  }

  const State& state_;
  const ir::ComputeDAG& dag_;
  std::vector<Expr> bodies_;
  std::map<std::string, ir::Stage> inlined_storage_; ///< node-stable for the Inliner
  std::map<std::pair<std::string, std::string>, std::vector<int>> attached_;
  std::map<std::string, Region> regions_;
};

} // namespace

LoweredFunc lower(const State& state, const LowerOptions& options) {
  const ir::ComputeDAG& dag = state.dag();
  LoweredFunc func;
  func.name = kernel_name(dag);
  for (int index : dag.arguments())
    func.args.push_back(stage_buffer(dag.stage(index), BufferScope::Argument));

  // The builder leaves out loops of extent 1 (their variable is 0) and
  // simplifies what it makes; unrolling puts constants into the copies,
  // which simplify folds.
  Stmt nest = vector_dims_innermost(NestBuilder(state).build_root());
  if (options.expand_unrolled)
    nest = simplify(unroll_loops(nest));
  func.body = nest;
  return func;
}

LoweredFunc lower_naive(const ir::ComputeDAG& dag) {
  return lower(State(dag));
}

} // namespace kiln::schedule
