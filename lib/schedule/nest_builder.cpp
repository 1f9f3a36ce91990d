#include "nest_builder.h"

#include "bound_inference.h"
#include "simplify.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/ir/limits.h"
#include "kiln/ir/linear_form.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace kiln::schedule {

using ir::Expr;

/// Local buffers above this size go to the heap instead of the stack.
constexpr std::int64_t kMaxStackBufferBytes = 256 << 10;

namespace {

/// Builds the loop nest of one stage and, inside it, of the stages computed
/// at its loops.
class NestBuilder {
public:
  explicit NestBuilder(const State& state) : state_(state), dag_(state.dag()) {
    std::map<std::string, const ir::Stage*> inlined;
    for (size_t i = 0; i < dag_.stages().size(); ++i) {
      const ir::Stage& s = dag_.stage(static_cast<int>(i));
      const StageState& st = state.stages()[i];
      Expr body = ir::inline_stages(s.body, inlined);
      if (body.depth() > ir::kMaxInlinedDepth)
        throw UserError(Error(
            "limit-exceeded",
            fmt::format("inlining the stages that '{}' reads makes its body {} levels deep, more "
                        "than {}; compute some of them at the root instead of inline",
                        s.name, body.depth(), ir::kMaxInlinedDepth)));
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

  BuiltNest build() {
    BuiltNest built;
    built.body = build_root(false);
    built.prepack = build_root(true);
    for (size_t i = 0; i < dag_.stages().size(); ++i)
      if (packed_ahead(static_cast<int>(i)))
        built.packed.push_back(stage_buffer(dag_.stage(static_cast<int>(i)), BufferScope::Packed));
    built.auto_unroll_steps = std::move(auto_unroll_steps_);
    return built;
  }

private:
  using Scope = std::map<std::string, std::int64_t>; // loop var → extent

  /// Whether a stage is computed once, ahead of the kernel's calls: at the
  /// root, from constant inputs alone, and no output (the caller owns
  /// those). Packing a weight is the common case: a schedule's cache_read
  /// of a constant input computed at the root.
  bool packed_ahead(int index) const {
    const ir::Stage& s = dag_.stage(index);
    return !s.is_placeholder() && !s.is_output &&
           state_.stages()[index].location == Location::Root && constant_[index];
  }

  /// The root stages of the kernel (or of the prepack nest), in DAG order;
  /// the kernel's own intermediates are heap buffers around the rest.
  Stmt build_root(bool prepack) {
    Stmt body;
    for (size_t i = dag_.stages().size(); i-- > 0;) {
      const ir::Stage& s = dag_.stage(static_cast<int>(i));
      const StageState& st = state_.stages()[i];
      if (s.is_placeholder() || st.location != Location::Root ||
          packed_ahead(static_cast<int>(i)) != prepack)
        continue;
      Stmt here = Block::make({build_stage(static_cast<int>(i), full_region(s), {}), body});
      body = s.is_output || prepack ? here
                                    : Allocate::make(stage_buffer(s, BufferScope::Global), here);
    }
    return body;
  }

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
    // guarded unless bounds prove it cannot. A dimension computed whole
    // needs none: its position stays below the extent by the split guards,
    // and a second guard would keep tail partitioning from peeling them.
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
      if (!is_zero(region.base[d]) || region.extent[d] != a.extent) {
        auto b = ir::bounds_of(coord, all);
        if (!b || b->min < 0 || b->max >= a.extent)
          guards.push_back(ir::logical_and(coord >= Expr(0), coord < Expr(a.extent)));
      }
    }
    if (reduce)
      for (const ir::IterVar& a : reduce->axes)
        coords.emplace_back(a.name, value.at(a.name));

    // Regions of the stages computed inside this one: what this stage reads
    // in one iteration of the loop, and what the stages computed beside
    // them there read over their own regions (consumers first, in reverse
    // stage order).
    Expr element = ir::substitute(reduce ? reduce->body : body, coords);
    for (const auto& [key, children] : attached_) {
      if (key.first != stage.name)
        continue;
      for (size_t c = children.size(); c-- > 0;) {
        const ir::Stage& child = dag_.stage(children[c]);
        std::vector<Reads> reads{consumer_reads(element, st, prefix, key.second, extent)};
        for (size_t s = c + 1; s < children.size(); ++s) {
          const ir::Stage& sibling = dag_.stage(children[s]);
          reads.push_back(sibling_reads(sibling, bodies_[children[s]], regions_.at(sibling.name)));
        }
        regions_[child.name] = infer_region(child, reads);
      }
    }
    element = rebase_loads(element, regions_);

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
        if (ir::uses_var(g, prefix + st.iters[i].name))
          level = static_cast<int>(i);
      guard_level.push_back(level);
    }

    // The pragma covers the loops of this stage and of the stages computed
    // inside them.
    const std::int64_t outer_unroll_step = unroll_step_;
    unroll_step_ = std::max(unroll_step_, st.auto_unroll_max_step);
    LoopContext ctx{stage, st, prefix, extent, guards, guard_level, store, init, scope};
    Stmt nest = wrap_guards(ctx, -1, build_loops(ctx, 0, false), false);
    unroll_step_ = outer_unroll_step;
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
    return ir::uses_any_var(e, reduce_vars);
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
    return extent == 1 ? body : make_loop(var, extent, kind_of(it.annotation), body);
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
        body = make_loop(ctx.prefix + iters[i].name, extent, kind_of(iters[i].annotation), body);
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

  /// A loop, with the auto_unroll_max_step in force recorded for it.
  Stmt make_loop(std::string var, std::int64_t extent, ForKind kind, Stmt body) {
    Stmt loop = For::make(std::move(var), extent, kind, std::move(body));
    if (unroll_step_ > 0)
      auto_unroll_steps_.insert_or_assign(loop.get(), unroll_step_);
    return loop;
  }

  static bool is_zero(const Expr& e) {
    const auto* i = e.as<ir::IntImm>();
    return i && i->value == 0;
  }

  const State& state_;
  const ir::ComputeDAG& dag_;
  std::vector<Expr> bodies_;
  const std::vector<bool> constant_ = dag_.constant_stages(); ///< ComputeDAG::is_constant
  std::map<std::string, ir::Stage> inlined_storage_;          ///< node-stable for the Inliner
  std::map<std::pair<std::string, std::string>, std::vector<int>> attached_;
  std::map<std::string, Region> regions_;
  std::int64_t unroll_step_ = 0; ///< auto_unroll_max_step in force (0: none)
  AutoUnrollSteps auto_unroll_steps_;
};

} // namespace

BuiltNest build_nest(const State& state) {
  return NestBuilder(state).build();
}

} // namespace kiln::schedule
