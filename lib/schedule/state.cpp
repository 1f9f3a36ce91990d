#include "kiln/schedule/state.h"

#include "kiln/ir/expr_visitor.h"
#include "kiln/schedule/lower.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kiln::schedule {

const Iterator* StageState::find_iter(std::string_view name) const {
  for (const Iterator& it : iters)
    if (it.name == name)
      return &it;
  return nullptr;
}

StageState initial_stage_state(const ir::Stage& stage) {
  StageState s;
  s.name = stage.name;
  if (stage.is_placeholder())
    return s;
  for (const ir::IterVar& a : stage.axes)
    s.iters.push_back({a.name, a.extent, IterKind::Spatial, Annotation::None});
  if (const ir::Reduce* r = stage.reduction())
    for (const ir::IterVar& a : r->axes)
      s.iters.push_back({a.name, a.extent, IterKind::Reduce, Annotation::None});
  return s;
}

State::State(ir::ComputeDAG dag) : original_(dag), dag_(std::move(dag)) {
  for (const ir::Stage& s : dag_.stages())
    stages_.push_back(initial_stage_state(s));
}

const StageState* State::find_stage(std::string_view name) const {
  for (const StageState& s : stages_)
    if (s.name == name)
      return &s;
  return nullptr;
}

Expected<State> State::replay(const ir::ComputeDAG& dag, const std::vector<Step>& steps) {
  return replay(State(dag), steps);
}

Expected<State> State::load(const ir::ComputeDAG& dag, const std::string& path) {
  auto steps = read_schedule_file(path);
  if (!steps)
    return steps.error();
  auto state = replay(dag, *steps);
  if (!state)
    return Error(state.error().id(), fmt::format("{}: {}", path, state.error().message()));
  return state;
}

Expected<State> State::replay(State base, const std::vector<Step>& steps) {
  const size_t done = base.steps().size();
  KILN_ASSERT(done <= steps.size() &&
                  std::equal(base.steps().begin(), base.steps().end(), steps.begin()),
              "replay from a state whose steps do not start the list");
  // No copy of the state per step (a third of replay's time): a refused
  // step ends the replay.
  for (size_t i = done; i < steps.size(); ++i)
    if (auto err = base.apply_unguarded(steps[i]))
      return Error(err->id(),
                   fmt::format("step {} ({}): {}", i, step_tag(steps[i]), err->message()));
  return base;
}

namespace {

[[noreturn]] void refuse(std::string id, std::string message) {
  throw UserError(Error(std::move(id), std::move(message)));
}

/// Applies steps to a copy of the state's parts; State::apply commits.
class StepApplier {
public:
  StepApplier(ir::ComputeDAG& dag, std::vector<StageState>& stages) : dag_(dag), stages_(stages) {}

  void operator()(const SplitStep& s) {
    StageState& st = loop_stage(s.stage, "split");
    size_t pos = iter_index(st, s.iter);
    refuse_if_attached_at(st, s.iter, "split");
    if (s.factors.empty())
      refuse("invalid-step",
             fmt::format("split of {}.{} needs at least one factor", s.stage, s.iter));
    const Iterator old = st.iters[pos];
    // A factor past the extent pads the loop; factors whose product wraps
    // (a damaged record's 2^32 twice) would divide by 0.
    std::int64_t inner = 1;
    for (std::int64_t f : s.factors) {
      if (f < 1)
        refuse("invalid-step",
               fmt::format("split of {}.{}: factor {} must be at least 1", s.stage, s.iter, f));
      if (__builtin_mul_overflow(inner, f, &inner))
        refuse("invalid-step", fmt::format("split of {}.{}: the factors {} multiply past 2^63",
                                           s.stage, s.iter, fmt::join(s.factors, ", ")));
    }
    SplitRelation rel{old.name, {}, s.factors};
    std::vector<Iterator> parts;
    for (size_t i = 0; i <= s.factors.size(); ++i) {
      std::string name = fmt::format("{}.{}", old.name, i);
      if (st.find_iter(name))
        refuse("invalid-step", fmt::format("split of {}.{} would create '{}', which exists",
                                           s.stage, s.iter, name));
      std::int64_t extent = i == 0 ? (old.extent + inner - 1) / inner : s.factors[i - 1];
      parts.push_back({name, extent, old.kind, Annotation::None});
      rel.children.push_back(name);
    }
    st.iters.erase(st.iters.begin() + pos);
    st.iters.insert(st.iters.begin() + pos, parts.begin(), parts.end());
    st.relations.push_back(std::move(rel));
    st.transformed = true;
  }

  void operator()(const FuseStep& s) {
    StageState& st = loop_stage(s.stage, "fuse");
    if (s.iters.size() < 2)
      refuse("invalid-step", fmt::format("fuse in {} needs at least two loops", s.stage));
    size_t first = iter_index(st, s.iters[0]);
    std::int64_t extent = 1;
    for (size_t i = 0; i < s.iters.size(); ++i) {
      size_t pos = iter_index(st, s.iters[i]);
      if (pos != first + i)
        refuse("invalid-step",
               fmt::format("fuse in {}: loops {} are not adjacent in this order (the loops are {})",
                           s.stage, fmt::join(s.iters, ", "), iter_names(st)));
      if (st.iters[pos].kind != st.iters[first].kind)
        refuse(
            "invalid-step",
            fmt::format("fuse in {}: cannot fuse a spatial loop with a reduction loop", s.stage));
      refuse_if_attached_at(st, s.iters[i], "fuse");
      if (__builtin_mul_overflow(extent, st.iters[pos].extent, &extent))
        refuse("invalid-step",
               fmt::format("fuse in {}: the fused loop would run more than 2^63 times", s.stage));
    }
    std::string name = fmt::format("{}", fmt::join(s.iters, "@"));
    Iterator fused{name, extent, st.iters[first].kind, Annotation::None};
    st.iters.erase(st.iters.begin() + first, st.iters.begin() + first + s.iters.size());
    st.iters.insert(st.iters.begin() + first, fused);
    st.relations.push_back(FuseRelation{s.iters, name});
    st.transformed = true;
  }

  void operator()(const ReorderStep& s) {
    StageState& st = loop_stage(s.stage, "reorder");
    std::vector<std::string> have, want = s.order;
    for (const Iterator& it : st.iters)
      have.push_back(it.name);
    std::vector<std::string> sorted_have = have;
    std::sort(sorted_have.begin(), sorted_have.end());
    std::sort(want.begin(), want.end());
    if (sorted_have != want)
      refuse("invalid-step",
             fmt::format("reorder of {} must list every loop once: it has {}, the step lists {}",
                         s.stage, fmt::join(have, ", "), fmt::join(s.order, ", ")));
    std::vector<Iterator> next;
    for (const std::string& n : s.order)
      next.push_back(*st.find_iter(n));
    st.iters = std::move(next);
    st.transformed = true;
  }

  void operator()(const ComputeAtStep& s) {
    StageState& st = compute_stage(s.stage, "compute_at");
    const ir::Stage& stage = dag_.stage(dag_.find_stage(s.stage));
    if (stage.is_output)
      refuse(
          "invalid-step",
          fmt::format("compute_at: '{}' is an output; outputs are computed at the root", s.stage));
    std::vector<int> consumers = effective_consumers(dag_.find_stage(s.stage));
    if (!all_read_at(consumers, s.target, s.target_iter))
      refuse("invalid-step",
             fmt::format("compute_at: '{}' can be computed inside a loop of a consumer when its "
                         "other consumers are computed at that loop too, but its consumers are "
                         "[{}]; compute them at {}.{} first",
                         s.stage, consumer_names(consumers), s.target, s.target_iter));
    StageState& target = compute_stage(s.target, "compute_at target");
    if (target.location == Location::Inline)
      refuse(
          "invalid-step",
          fmt::format("compute_at: '{}' is inlined and has no loops; compute it at the root first",
                      s.target));
    const Iterator* it = target.find_iter(s.target_iter);
    if (!it)
      refuse("unknown-iterator", fmt::format("compute_at: '{}' has no loop '{}'; its loops are {}",
                                             s.target, s.target_iter, iter_names(target)));
    if (it->annotation == Annotation::Vectorize)
      refuse("invalid-step", fmt::format("compute_at: cannot compute '{}' inside the vectorized "
                                         "loop {}.{}",
                                         s.stage, s.target, s.target_iter));
    refuse_if_producer_attached_through(st, "compute_at");
    st.location = Location::At;
    st.at_stage = s.target;
    st.at_iter = s.target_iter;
  }

  void operator()(const ComputeInlineStep& s) {
    StageState& st = compute_stage(s.stage, "compute_inline");
    const ir::Stage& stage = dag_.stage(dag_.find_stage(s.stage));
    if (stage.is_output)
      refuse("invalid-step",
             fmt::format("compute_inline: '{}' is an output and must be stored", s.stage));
    if (stage.reduction())
      refuse("invalid-step",
             fmt::format("compute_inline: '{}' is a reduction; only element-wise stages inline",
                         s.stage));
    for (const StageState& other : stages_)
      if (other.location == Location::At && other.at_stage == s.stage)
        refuse("invalid-step", fmt::format("compute_inline: '{}' is computed inside '{}'; move it "
                                           "first",
                                           other.name, s.stage));
    st.location = Location::Inline;
    st.at_stage.clear();
    st.at_iter.clear();
  }

  /// Un-inlining a stage would leave a producer computed inside a stage
  /// that no longer reads it.
  void refuse_if_producer_attached_through(const StageState& st, const char* step) {
    if (st.location != Location::Inline)
      return;
    for (int p : dag_.producers(dag_.find_stage(st.name)))
      if (stages_[p].location == Location::At)
        refuse("invalid-step",
               fmt::format("{}: '{}' is computed at '{}', which reads it through the inlined "
                           "'{}'; compute '{}' at the root first",
                           step, stages_[p].name, stages_[p].at_stage, st.name, stages_[p].name));
  }

  void operator()(const ComputeRootStep& s) {
    StageState& st = compute_stage(s.stage, "compute_root");
    refuse_if_producer_attached_through(st, "compute_root");
    st.location = Location::Root;
    st.at_stage.clear();
    st.at_iter.clear();
  }

  /// A step that rewrites the DAG around a stage (cache_write, rfactor)
  /// must come before the stage's loops are transformed or placed, and
  /// before any stage is computed inside it.
  void refuse_unless_untouched(const std::string& stage, const char* step) {
    StageState& st = compute_stage(stage, step);
    if (st.transformed || st.location != Location::Root)
      refuse("invalid-step",
             fmt::format("{} of '{}' must come before its loops are transformed or placed; move "
                         "the step earlier",
                         step, stage));
    for (const StageState& other : stages_)
      if (other.location == Location::At && other.at_stage == stage)
        refuse("invalid-step", fmt::format("{} of '{}': '{}' is computed inside it; move that "
                                           "step after",
                                           step, stage, other.name));
  }

  void operator()(const CacheWriteStep& s) {
    refuse_unless_untouched(s.stage, "cache_write");
    std::string name = s.stage + ".local";
    refuse_if_stage_exists(name);
    int index = dag_.find_stage(s.stage);
    std::vector<ir::Stage> stages = dag_.stages();
    ir::Stage cache = stages[index];
    cache.name = name;
    cache.is_output = false;
    ir::Stage& copy = stages[index];
    std::vector<ir::Expr> axes;
    for (const ir::IterVar& a : copy.axes)
      axes.push_back(ir::var(a));
    copy.body = ir::Load::make(name, axes, copy.dtype);
    stages.insert(stages.begin() + index, cache);
    rebuild(std::move(stages), s.stage);
  }

  void operator()(const CacheReadStep& s) {
    int index = dag_.find_stage(s.stage);
    if (index < 0)
      refuse("unknown-stage", fmt::format("cache_read: no stage '{}'", s.stage));
    int reader = dag_.find_stage(s.reader);
    std::vector<int> consumers = dag_.consumers(index);
    if (reader < 0 || std::find(consumers.begin(), consumers.end(), reader) == consumers.end())
      refuse("invalid-step",
             fmt::format("cache_read: '{}' does not read '{}'; its readers are [{}]", s.reader,
                         s.stage, consumer_names(consumers)));
    // The copy would become the stage's only reader, at the root, while the
    // stage is computed only inside a loop of its old reader.
    const StageState& source_state = stages_[static_cast<size_t>(index)];
    if (source_state.location == Location::At)
      refuse("invalid-step",
             fmt::format("cache_read: '{}' is computed at {}.{}; compute it at the root first, "
                         "or cache_read before compute_at",
                         s.stage, source_state.at_stage, source_state.at_iter));
    std::string name = s.stage + ".cache";
    refuse_if_stage_exists(name);
    std::vector<ir::Stage> stages = dag_.stages();
    const ir::Stage& source = stages[index];
    ir::Stage cache;
    cache.kind = ir::StageKind::Compute;
    cache.name = name;
    cache.dtype = source.dtype;
    std::vector<ir::Expr> axes;
    for (size_t d = 0; d < source.axes.size(); ++d) {
      cache.axes.push_back({fmt::format("ax{}", d), source.axes[d].extent});
      axes.push_back(ir::var(cache.axes.back()));
    }
    cache.body = ir::Load::make(source.name, axes, source.dtype);
    ir::Stage& r = stages[reader];
    r.body = rename_loads(r.body, source.name, name);
    stages.insert(stages.begin() + index + 1, cache);
    rebuild(std::move(stages));
  }

  void operator()(const RfactorStep& s) {
    refuse_unless_untouched(s.stage, "rfactor");
    const int index = dag_.find_stage(s.stage);
    const ir::Stage& stage = dag_.stage(index);
    const ir::Reduce* r = stage.reduction();
    if (!r)
      refuse("invalid-step",
             fmt::format("rfactor: '{}' is not a reduction; only a reduction's axis factors",
                         s.stage));
    auto axis = std::find_if(r->axes.begin(), r->axes.end(),
                             [&](const ir::IterVar& a) { return a.name == s.iter; });
    if (axis == r->axes.end()) {
      std::vector<std::string> names;
      for (const ir::IterVar& a : r->axes)
        names.push_back(a.name);
      refuse("invalid-step", fmt::format("rfactor {}: '{}' is not a reduction axis of it; its "
                                         "reduction axes are {}",
                                         s.stage, s.iter, fmt::join(names, ", ")));
    }
    const std::int64_t extent = axis->extent;
    if (s.factor < 2 || s.factor > extent)
      refuse("invalid-step",
             fmt::format("rfactor {}.{}: factor {} must be from 2 to the axis's extent {}", s.stage,
                         s.iter, s.factor, extent));
    const std::string name = s.stage + ".rf";
    refuse_if_stage_exists(name);
    const ir::IterVar lane{s.iter + ".r", s.factor};
    const ir::IterVar outer{s.iter + ".o", (extent + s.factor - 1) / s.factor};
    for (const ir::IterVar& a : stage.axes)
      if (a.name == lane.name || a.name == outer.name)
        refuse("invalid-step", fmt::format("rfactor {}.{}: the stage already has an axis '{}'",
                                           s.stage, s.iter, a.name));

    // S.rf[axes, r] = reduce(body at iter = o * factor + r, over o and the
    // other reduction axes); points past the extent add the identity.
    ir::Expr at = ir::var(outer) * s.factor + ir::var(lane);
    ir::Expr body = ir::substitute(r->body, {{s.iter, at}});
    if (extent % s.factor != 0)
      body = ir::select(at < extent, body, reduce_identity(r->op, body.type()));
    std::vector<ir::IterVar> reduce_axes = r->axes;
    reduce_axes[static_cast<std::size_t>(axis - r->axes.begin())] = outer;
    ir::Stage rf;
    rf.kind = ir::StageKind::Compute;
    rf.name = name;
    rf.dtype = stage.dtype;
    rf.axes = stage.axes;
    rf.axes.push_back(lane);
    rf.body = ir::Reduce::make(r->op, body, reduce_axes);
    rf.where = stage.where;

    // S[axes] = reduce(S.rf[axes, r] over r).
    std::vector<ir::Expr> indices;
    for (const ir::IterVar& a : stage.axes)
      indices.push_back(ir::var(a));
    indices.push_back(ir::var(lane));
    const ir::ReduceOp op = r->op;
    std::vector<ir::Stage> stages = dag_.stages();
    stages[static_cast<std::size_t>(index)].body =
        ir::Reduce::make(op, ir::Load::make(name, indices, stage.dtype), {lane});
    stages.insert(stages.begin() + index, std::move(rf));
    rebuild(std::move(stages), s.stage);
  }

  void operator()(const AnnotateStep& s) {
    StageState& st = loop_stage(s.stage, "annotate");
    Iterator& it = st.iters[iter_index(st, s.iter)];
    std::string where = fmt::format("{}.{}", s.stage, s.iter);
    if (s.annotation == Annotation::Vectorize) {
      if (it.kind == IterKind::Reduce)
        refuse("invalid-step",
               fmt::format("vectorize {}: vectorizing a reduction loop is not "
                           "supported; vectorize a spatial loop and put it innermost",
                           where));
      for (const StageState& other : stages_)
        if (other.location == Location::At && other.at_stage == s.stage && other.at_iter == s.iter)
          refuse("invalid-step",
                 fmt::format("vectorize {}: '{}' is computed inside it", where, other.name));
    }
    if (s.annotation == Annotation::Parallel && it.kind == IterKind::Reduce)
      refuse("invalid-step",
             fmt::format("parallel {}: a reduction loop cannot run in parallel", where));
    it.annotation = s.annotation;
    st.transformed = true;
  }

  void operator()(const PragmaStep& s) {
    StageState& st = loop_stage(s.stage, "pragma");
    if (s.auto_unroll_max_step < 0)
      refuse("invalid-step", "pragma auto_unroll_max_step must not be negative");
    st.auto_unroll_max_step = s.auto_unroll_max_step;
  }

  /// After any step: every stage computed at a loop is still read only
  /// inside one iteration of it (through inlined stages): by that loop's
  /// stage, which still has the loop, and by stages computed at the same
  /// loop. A step that changes who reads a stage or where (a cache_read of
  /// an inlined stage, a compute_root that undoes an inlining, moving a
  /// consumer computed beside it, …) must not leave a stage computed inside
  /// a loop where not all its readers are: lowering would compute it there
  /// while a reader looks for it elsewhere.
  void check_attachments(std::string_view step) {
    for (size_t i = 0; i < stages_.size(); ++i) {
      const StageState& st = stages_[i];
      if (st.location != Location::At)
        continue;
      int target = dag_.find_stage(st.at_stage);
      bool ok = target >= 0 && stages_[static_cast<size_t>(target)].location != Location::Inline &&
                stages_[static_cast<size_t>(target)].find_iter(st.at_iter) &&
                all_read_at(effective_consumers(static_cast<int>(i)), st.at_stage, st.at_iter);
      if (!ok)
        refuse("invalid-step",
               fmt::format("{}: '{}' is computed at {}.{}, where not all its readers would be; "
                           "compute '{}' at the root first",
                           step, st.name, st.at_stage, st.at_iter, st.name));
    }
  }

  /// Whether the stage's consumers are all inside one iteration of loop
  /// `iter` of `target`: `target` itself, or stages computed at that loop
  /// (softmax's row stages, computed at the output's row loop: the row
  /// maximum is read by the exponentials beside it). Bound inference covers
  /// all their reads (lib/schedule/bound_inference.h).
  bool all_read_at(const std::vector<int>& consumers, const std::string& target,
                   const std::string& iter) const {
    for (int c : consumers) {
      const StageState& cs = stages_[static_cast<size_t>(c)];
      if (cs.name != target &&
          (cs.location != Location::At || cs.at_stage != target || cs.at_iter != iter))
        return false;
    }
    return !consumers.empty();
  }

private:
  StageState& find(const std::string& name, const char* step) {
    for (StageState& s : stages_)
      if (s.name == name)
        return s;
    std::vector<std::string> names;
    for (const StageState& s : stages_)
      names.push_back(s.name);
    refuse("unknown-stage",
           fmt::format("{}: no stage '{}'; the stages are {}", step, name, fmt::join(names, ", ")));
  }

  StageState& compute_stage(const std::string& name, const char* step) {
    StageState& st = find(name, step);
    if (dag_.stage(dag_.find_stage(name)).is_placeholder())
      refuse("invalid-step", fmt::format("{}: '{}' is an input and has no loops", step, name));
    return st;
  }

  StageState& loop_stage(const std::string& name, const char* step) {
    StageState& st = compute_stage(name, step);
    if (st.location == Location::Inline)
      refuse("invalid-step",
             fmt::format("{}: '{}' is inlined and has no loops; compute it at the root first", step,
                         name));
    return st;
  }

  static std::string iter_names(const StageState& st) {
    std::vector<std::string> names;
    for (const Iterator& it : st.iters)
      names.push_back(it.name);
    return fmt::format("{}", fmt::join(names, ", "));
  }

  size_t iter_index(const StageState& st, const std::string& iter) {
    for (size_t i = 0; i < st.iters.size(); ++i)
      if (st.iters[i].name == iter)
        return i;
    refuse("unknown-iterator", fmt::format("stage '{}' has no loop '{}'; its loops are {}", st.name,
                                           iter, iter_names(st)));
  }

  void refuse_if_attached_at(const StageState& st, const std::string& iter, const char* step) {
    for (const StageState& other : stages_)
      if (other.location == Location::At && other.at_stage == st.name && other.at_iter == iter)
        refuse("invalid-step", fmt::format("{} {}.{}: '{}' is computed at this loop; transform the "
                                           "loops before compute_at",
                                           step, st.name, iter, other.name));
  }

  void refuse_if_stage_exists(const std::string& name) {
    if (dag_.find_stage(name) >= 0)
      refuse("invalid-step", fmt::format("a stage named '{}' exists already", name));
  }

  /// The stages that read `index` once inlined stages are substituted: an
  /// inlined consumer is replaced by its own consumers.
  std::vector<int> effective_consumers(int index) {
    std::vector<int> out;
    for (int c : dag_.consumers(index)) {
      if (stages_[c].location != Location::Inline) {
        out.push_back(c);
        continue;
      }
      for (int cc : effective_consumers(c))
        if (std::find(out.begin(), out.end(), cc) == out.end())
          out.push_back(cc);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::string consumer_names(const std::vector<int>& consumers) {
    std::vector<std::string> names;
    for (int c : consumers)
      names.push_back(dag_.stage(c).name);
    return fmt::format("{}", fmt::join(names, ", "));
  }

  static ir::Expr rename_loads(const ir::Expr& e, const std::string& from, const std::string& to) {
    class Renamer : public ir::ExprMutator {
    public:
      Renamer(const std::string& f, const std::string& t) : from(f), to(t) {}
      using ExprMutator::mutate;

    protected:
      ir::Expr mutate(const ir::Load* l, const ir::Expr& self) override {
        ir::Expr inner = ExprMutator::mutate(l, self);
        const auto* load = inner.as<ir::Load>();
        if (load->tensor != from)
          return inner;
        return ir::Load::make(to, load->indices, load->type);
      }

    private:
      const std::string& from;
      const std::string& to;
    };
    Renamer r(from, to);
    return r.mutate(e);
  }

  /// Replaces the DAG, keeping every existing stage's state except `reset`
  /// (the copy left by cache_write, whose loops changed), which starts over
  /// like the new stages.
  void rebuild(std::vector<ir::Stage> stages, const std::string& reset = "") {
    ir::ComputeDAG next(dag_.name(), std::move(stages), dag_.params());
    std::vector<StageState> states;
    for (const ir::Stage& s : next.stages()) {
      auto old = std::find_if(stages_.begin(), stages_.end(),
                              [&](const StageState& st) { return st.name == s.name; });
      if (old != stages_.end() && s.name != reset)
        states.push_back(*old);
      else
        states.push_back(initial_stage_state(s));
    }
    dag_ = std::move(next);
    stages_ = std::move(states);
  }

  ir::ComputeDAG& dag_;
  std::vector<StageState>& stages_;
};

/// Applies `step` to `dag` and `stages` in place; on a refusal they may be
/// left half-changed.
std::optional<Error> apply_step(ir::ComputeDAG& dag, std::vector<StageState>& stages,
                                const Step& step) {
  try {
    StepApplier applier(dag, stages);
    std::visit(applier, step);
    applier.check_attachments(step_tag(step));
  } catch (const UserError& e) {
    return e.error();
  }
  return std::nullopt;
}

} // namespace

std::optional<Error> State::apply(const Step& step) {
  ir::ComputeDAG dag = dag_;
  std::vector<StageState> stages = stages_;
  if (auto err = apply_step(dag, stages, step))
    return err;
  dag_ = std::move(dag);
  stages_ = std::move(stages);
  steps_.push_back(step);
  return std::nullopt;
}

std::optional<Error> State::apply_unguarded(const Step& step) {
  if (auto err = apply_step(dag_, stages_, step))
    return err;
  steps_.push_back(step);
  return std::nullopt;
}

void State::apply_or_throw(const Step& step) {
  if (auto err = apply(step))
    throw UserError(*err);
}

std::vector<std::string> State::split(const std::string& stage, const std::string& iter,
                                      std::vector<std::int64_t> factors) {
  size_t n = factors.size();
  apply_or_throw(SplitStep{stage, iter, std::move(factors)});
  std::vector<std::string> names;
  for (size_t i = 0; i <= n; ++i)
    names.push_back(fmt::format("{}.{}", iter, i));
  return names;
}

std::string State::fuse(const std::string& stage, std::vector<std::string> iters) {
  std::string name = fmt::format("{}", fmt::join(iters, "@"));
  apply_or_throw(FuseStep{stage, std::move(iters)});
  return name;
}

void State::reorder(const std::string& stage, std::vector<std::string> order) {
  apply_or_throw(ReorderStep{stage, std::move(order)});
}
void State::compute_at(const std::string& stage, const std::string& target,
                       const std::string& iter) {
  apply_or_throw(ComputeAtStep{stage, target, iter});
}
void State::compute_inline(const std::string& stage) {
  apply_or_throw(ComputeInlineStep{stage});
}
void State::compute_root(const std::string& stage) {
  apply_or_throw(ComputeRootStep{stage});
}
std::string State::cache_write(const std::string& stage) {
  apply_or_throw(CacheWriteStep{stage});
  return stage + ".local";
}
std::string State::rfactor(const std::string& stage, const std::string& iter, std::int64_t factor) {
  apply_or_throw(RfactorStep{stage, iter, factor});
  return stage + ".rf";
}
std::string State::cache_read(const std::string& stage, const std::string& reader) {
  apply_or_throw(CacheReadStep{stage, reader});
  return stage + ".cache";
}
void State::annotate(const std::string& stage, const std::string& iter, Annotation a) {
  apply_or_throw(AnnotateStep{stage, iter, a});
}
void State::parallel(const std::string& stage, const std::string& iter) {
  annotate(stage, iter, Annotation::Parallel);
}
void State::vectorize(const std::string& stage, const std::string& iter) {
  annotate(stage, iter, Annotation::Vectorize);
}
void State::unroll(const std::string& stage, const std::string& iter) {
  annotate(stage, iter, Annotation::Unroll);
}
void State::pragma_auto_unroll(const std::string& stage, std::int64_t max_step) {
  apply_or_throw(PragmaStep{stage, max_step});
}

} // namespace kiln::schedule
