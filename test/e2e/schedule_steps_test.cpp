// Every transform step on every op in ops/, at small shapes: each step kind
// alone wherever it applies, then a few realistic schedules, then the
// minimised schedules of bugs the property test found. Each schedule is
// lowered, compiled, run and compared element by element with the
// interpreter; a failing section names the op and the schedule and prints
// its steps and the `kiln run` command that replays it.
#include "../unit/schedule/loop_count.h"
#include "kernel_check.h"
#include "small_shapes.h"

#include "kiln/ir/parser.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/schedule/transform_step.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <tuple>

using namespace kiln;
using namespace kiln::schedule;

namespace {

struct OpCase {
  std::string op;
  ir::ParamOverrides shape;
  ir::ComputeDAG dag;
};

/// Every op in ops/ at its small shape, parsed once.
const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = [] {
    std::vector<OpCase> out;
    for (const auto& path : test::op_files()) {
      std::string op = path.stem().string();
      auto shape = test::small_shapes().find(op);
      if (shape == test::small_shapes().end())
        throw std::runtime_error("add small test shapes for " + op + " in test/e2e/small_shapes.h");
      auto dag = ir::parse_op_file(path.string(), shape->second);
      if (!dag)
        throw std::runtime_error(dag.error().render());
      out.push_back({op, shape->second, std::move(*dag)});
    }
    return out;
  }();
  return cases;
}

const OpCase& op_case(const std::string& op, const ir::ParamOverrides& shape = {}) {
  if (shape.empty()) {
    for (const OpCase& c : op_cases())
      if (c.op == op)
        return c;
    throw std::runtime_error("no op " + op);
  }
  // Other shapes are parsed on demand and kept.
  static std::vector<std::unique_ptr<OpCase>> extra;
  for (const auto& c : extra)
    if (c->op == op && c->shape == shape)
      return *c;
  auto dag = ir::parse_op_file(test::op_file(op).string(), shape);
  if (!dag)
    throw std::runtime_error(dag.error().render());
  extra.push_back(std::make_unique<OpCase>(OpCase{op, shape, std::move(*dag)}));
  return *extra.back();
}

/// Replays `steps` on the op and checks the kernel against the interpreter.
void check_schedule(const OpCase& c, const std::vector<Step>& steps) {
  auto state = State::replay(c.dag, steps);
  INFO("op " << c.op << " " << test::set_flags(c.shape) << "\nsteps: " << steps_to_json(steps));
  if (!state)
    FAIL("the schedule was refused: " << state.error().message());
  test::KernelOutcome outcome = test::KernelChecker::shared().check(c.dag, *state);
  INFO(test::reproduce_hint(c.op, c.shape, *state));
  INFO(outcome.failure);
  CHECK(outcome.ok());
  CHECK(outcome.check.passed);
  CHECK_FALSE(outcome.check.sampled());
}

struct NamedSchedule {
  std::string name;
  std::vector<Step> steps;
};

/// One section per op and schedule: `make` lists the schedules of an op.
void check_each(const std::function<std::vector<NamedSchedule>(const OpCase&)>& make) {
  int sections = 0;
  for (const OpCase& c : op_cases())
    for (const NamedSchedule& s : make(c)) {
      ++sections;
      DYNAMIC_SECTION(c.op << ": " << s.name) {
        check_schedule(c, s.steps);
      }
    }
  REQUIRE(sections > 0);
}

// --- what a DAG offers ---

bool is_compute(const ir::ComputeDAG& dag, const StageState& st) {
  return !dag.stage(dag.find_stage(st.name)).is_placeholder();
}

/// The compute stages of the naive state of `c`.
std::vector<StageState> compute_stages(const OpCase& c) {
  State s(c.dag);
  std::vector<StageState> out;
  for (const StageState& st : s.stages())
    if (is_compute(c.dag, st))
      out.push_back(st);
  return out;
}

std::vector<std::string> iter_names(const StageState& st) {
  std::vector<std::string> names;
  for (const Iterator& it : st.iters)
    names.push_back(it.name);
  return names;
}

std::vector<std::string> spatial_names(const StageState& st) {
  std::vector<std::string> names;
  for (const Iterator& it : st.iters)
    if (it.kind == IterKind::Spatial)
      names.push_back(it.name);
  return names;
}

/// Non-output compute stages that have exactly one consumer, with it.
std::vector<std::pair<std::string, std::string>> attachable(const ir::ComputeDAG& dag) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < static_cast<int>(dag.stages().size()); ++i) {
    const ir::Stage& s = dag.stage(i);
    auto consumers = dag.consumers(i);
    if (!s.is_placeholder() && !s.is_output && consumers.size() == 1)
      out.emplace_back(s.name, dag.stage(consumers[0]).name);
  }
  return out;
}

std::int64_t smallest_divisor(std::int64_t e) {
  for (std::int64_t d = 2; d < e; ++d)
    if (e % d == 0)
      return d;
  return e;
}

std::int64_t smallest_non_divisor(std::int64_t e) {
  for (std::int64_t f = 2;; ++f)
    if (e % f != 0)
      return f;
}

std::string name_of(const std::string& stage, const std::string& iter) {
  return stage + "." + iter;
}

} // namespace

// --- each step alone ---

TEST_CASE("split: dividing, with a tail, and in three", "[e2e][schedule][split]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c))
      for (const Iterator& it : st.iters) {
        std::string where = name_of(st.name, it.name);
        std::int64_t d = smallest_divisor(it.extent), t = smallest_non_divisor(it.extent);
        out.push_back({fmt::format("split {} by {} (divides {})", where, d, it.extent),
                       {SplitStep{st.name, it.name, {d}}}});
        out.push_back({fmt::format("split {} by {} (tail of {})", where, t, it.extent),
                       {SplitStep{st.name, it.name, {t}}}});
        out.push_back({fmt::format("split {} by {} (more than the extent)", where, it.extent + 2),
                       {SplitStep{st.name, it.name, {it.extent + 2}}}});
        out.push_back(
            {fmt::format("split {} by [2, 3]", where), {SplitStep{st.name, it.name, {2, 3}}}});
      }
    return out;
  });
}

TEST_CASE("fuse: adjacent loops of one kind", "[e2e][schedule][fuse]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c)) {
      for (size_t i = 0; i + 1 < st.iters.size(); ++i)
        if (st.iters[i].kind == st.iters[i + 1].kind)
          out.push_back(
              {fmt::format("fuse {}.{}, {}", st.name, st.iters[i].name, st.iters[i + 1].name),
               {FuseStep{st.name, {st.iters[i].name, st.iters[i + 1].name}}}});
      std::vector<std::string> spatial = spatial_names(st);
      if (spatial.size() > 2)
        out.push_back(
            {fmt::format("fuse all spatial loops of {}", st.name), {FuseStep{st.name, spatial}}});
      // A split loop fused back, with a tail in the middle.
      const Iterator& last = st.iters.back();
      std::int64_t t = smallest_non_divisor(last.extent);
      out.push_back({fmt::format("split {} by {}, fuse it back", name_of(st.name, last.name), t),
                     {SplitStep{st.name, last.name, {t}},
                      FuseStep{st.name, {last.name + ".0", last.name + ".1"}}}});
    }
    return out;
  });
}

TEST_CASE("reorder: reversed, reductions outermost", "[e2e][schedule][reorder]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c)) {
      std::vector<std::string> names = iter_names(st);
      if (names.size() < 2)
        continue;
      std::vector<std::string> reversed(names.rbegin(), names.rend());
      out.push_back(
          {fmt::format("reorder {} reversed", st.name), {ReorderStep{st.name, reversed}}});
      std::vector<std::string> reduce_first;
      for (const Iterator& it : st.iters)
        if (it.kind == IterKind::Reduce)
          reduce_first.push_back(it.name);
      if (reduce_first.empty())
        continue;
      for (const std::string& n : spatial_names(st))
        reduce_first.push_back(n);
      out.push_back({fmt::format("reorder {}: reductions outermost", st.name),
                     {ReorderStep{st.name, reduce_first}}});
      // Tiles with tails, reductions between the tile loops.
      const Iterator& first = st.iters.front();
      std::vector<std::string> tiled = {first.name + ".0"};
      for (const Iterator& it : st.iters)
        if (it.kind == IterKind::Reduce)
          tiled.push_back(it.name);
      tiled.push_back(first.name + ".1");
      for (const Iterator& it : st.iters)
        if (it.kind == IterKind::Spatial && it.name != first.name)
          tiled.push_back(it.name);
      out.push_back(
          {fmt::format("split {} by 2, reductions between its parts", name_of(st.name, first.name)),
           {SplitStep{st.name, first.name, {2}}, ReorderStep{st.name, tiled}}});
    }
    return out;
  });
}

TEST_CASE("compute_at: each intermediate at each loop of its consumer",
          "[e2e][schedule][compute_at]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    State naive(c.dag);
    for (const auto& [stage, consumer] : attachable(c.dag)) {
      const StageState& target = *naive.find_stage(consumer);
      for (const Iterator& it : target.iters)
        out.push_back({fmt::format("compute_at {} {}", stage, name_of(consumer, it.name)),
                       {ComputeAtStep{stage, consumer, it.name}}});
      // The consumer tiled with tails first: regions shrink and get guards.
      std::vector<Step> tiled;
      std::vector<std::string> outer, inner;
      for (const Iterator& it : target.iters) {
        if (it.kind != IterKind::Spatial)
          continue;
        tiled.push_back(SplitStep{consumer, it.name, {smallest_non_divisor(it.extent)}});
        outer.push_back(it.name + ".0");
        inner.push_back(it.name + ".1");
      }
      std::vector<std::string> order = outer;
      for (const Iterator& it : target.iters)
        if (it.kind == IterKind::Reduce)
          order.push_back(it.name);
      order.insert(order.end(), inner.begin(), inner.end());
      tiled.push_back(ReorderStep{consumer, order});
      for (const std::string& at : order) {
        std::vector<Step> steps = tiled;
        steps.push_back(ComputeAtStep{stage, consumer, at});
        out.push_back(
            {fmt::format("tile {} with tails, compute_at {} {}", consumer, stage, at), steps});
      }
    }
    return out;
  });
}

TEST_CASE("compute_at through an inlined consumer, at each loop of its reader",
          "[e2e][schedule][compute_at]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    State naive(c.dag);
    for (const auto& [stage, consumer] : attachable(c.dag)) {
      const ir::Stage& middle = c.dag.stage(c.dag.find_stage(consumer));
      if (middle.is_output || middle.reduction())
        continue;
      auto readers = c.dag.consumers(c.dag.find_stage(consumer));
      if (readers.size() != 1)
        continue;
      std::string reader = c.dag.stage(readers[0]).name;
      for (const Iterator& it : naive.find_stage(reader)->iters)
        out.push_back({fmt::format("compute_inline {}, compute_at {} {}", consumer, stage,
                                   name_of(reader, it.name)),
                       {ComputeInlineStep{consumer}, ComputeAtStep{stage, reader, it.name}}});
    }
    if (out.empty())
      out.push_back({"naive (no stage reads another through an element-wise stage)", {}});
    return out;
  });
}

TEST_CASE("compute_at of a stage with several consumers needs them all at that loop",
          "[e2e][schedule][compute_at]") {
  const OpCase& c = op_case("softmax");
  State s(c.dag);
  // exps is read by row_sum and by Y: row_sum is still at the root.
  auto err = s.apply(ComputeAtStep{"exps", "Y", "i"});
  REQUIRE(err.has_value());
  CHECK_THAT(err->message(), Catch::Contains("its consumers are [row_sum, Y]; compute them at "
                                             "Y.i first"));
  REQUIRE_FALSE(s.apply(ComputeAtStep{"row_sum", "Y", "i"}).has_value());
  REQUIRE_FALSE(s.apply(ComputeAtStep{"exps", "Y", "i"}).has_value());
  // A consumer computed beside it cannot leave while exps stays.
  for (Step away : {Step(ComputeRootStep{"row_sum"}), Step(ComputeInlineStep{"Y"}),
                    Step(ComputeAtStep{"row_sum", "Y", "j"})}) {
    State t = s;
    auto moved = t.apply(away);
    REQUIRE(moved.has_value());
    INFO(moved->message());
    CHECK((moved->message().find("where not all its readers would be") != std::string::npos ||
           moved->message().find("is an output") != std::string::npos));
  }
}

TEST_CASE("row stages fused into the output's row loop, each computed beside its readers",
          "[e2e][schedule][compute_at][fused]") {
  // Softmax and layer norm as one parallel loop over rows: every row stage
  // (the rfactored partials, the maximum, the exponentials, the sums) at
  // Y's row loop, the later ones reading the earlier ones there; odd
  // shapes so the rfactored tails and the vector tails are exercised.
  for (auto [op, rows, cols] :
       {std::tuple{"softmax", "5", "37"}, std::tuple{"layer_norm", "3", "45"}}) {
    const OpCase& c = op_case(op, {{"M", rows}, {"N", cols}});
    bool softmax = std::string(op) == "softmax";
    std::vector<std::string> reductions = softmax ? std::vector<std::string>{"row_max", "row_sum"}
                                                  : std::vector<std::string>{"row_sum", "row_var"};
    for (std::int64_t factor : {8, 16}) {
      for (std::string at : {"i", "i.0"}) {
        std::vector<Step> steps;
        if (!softmax)
          steps.push_back(ComputeInlineStep{"centered"});
        for (const std::string& r : reductions) {
          steps.push_back(RfactorStep{r, "j", factor});
          steps.push_back(ReorderStep{r + ".rf", {"i", "j.o", "j.r"}});
          steps.push_back(AnnotateStep{r + ".rf", "j.r", Annotation::Vectorize});
        }
        if (softmax) {
          steps.push_back(SplitStep{"exps", "j", {8}});
          steps.push_back(AnnotateStep{"exps", "j.1", Annotation::Vectorize});
        }
        steps.push_back(SplitStep{"Y", "j", {8}});
        steps.push_back(AnnotateStep{"Y", "j.1", Annotation::Vectorize});
        if (at == "i.0") {
          steps.push_back(SplitStep{"Y", "i", {2}});
          steps.push_back(ReorderStep{"Y", {"i.0", "i.1", "j.0", "j.1"}});
        }
        steps.push_back(AnnotateStep{"Y", at, Annotation::Parallel});
        // Consumers first: each stage is computed at the loop where all its
        // readers already are.
        for (auto r = reductions.rbegin(); r != reductions.rend(); ++r) {
          steps.push_back(ComputeAtStep{*r, "Y", at});
          steps.push_back(ComputeAtStep{*r + ".rf", "Y", at});
          if (softmax && *r == "row_sum")
            steps.push_back(ComputeAtStep{"exps", "Y", at});
        }
        DYNAMIC_SECTION(op << " rfactor " << factor << " at Y." << at) {
          auto state = State::replay(c.dag, steps);
          REQUIRE(state.ok());
          LoweredFunc func = schedule::lower(*state);
          INFO(schedule::to_string(func));
          // One parallel loop: the row stages live inside it.
          CHECK(test::count_loops(func, ForKind::Parallel) == 1);
          check_schedule(c, steps);
        }
      }
    }
  }
}

TEST_CASE("compute_inline: each element-wise intermediate", "[e2e][schedule][compute_inline]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    std::vector<Step> all;
    for (const ir::Stage& s : c.dag.stages())
      if (!s.is_placeholder() && !s.is_output && !s.reduction()) {
        out.push_back({"compute_inline " + s.name, {ComputeInlineStep{s.name}}});
        all.push_back(ComputeInlineStep{s.name});
      }
    if (all.size() > 1)
      out.push_back({"compute_inline all", all});
    // Inlined, then back to the root.
    if (!all.empty()) {
      std::string name = std::get<ComputeInlineStep>(all.front()).stage;
      out.push_back({"compute_inline then compute_root " + name,
                     {ComputeInlineStep{name}, ComputeRootStep{name}}});
    }
    return out;
  });
}

TEST_CASE("cache_write: alone and computed at each loop of the copy",
          "[e2e][schedule][cache_write]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c)) {
      std::string local = st.name + ".local";
      out.push_back({"cache_write " + st.name, {CacheWriteStep{st.name}}});
      for (const Iterator& it : st.iters) {
        if (it.kind != IterKind::Spatial)
          continue;
        out.push_back({fmt::format("cache_write {}, compute_at {} {}", st.name, local,
                                   name_of(st.name, it.name)),
                       {CacheWriteStep{st.name}, ComputeAtStep{local, st.name, it.name}}});
      }
    }
    return out;
  });
}

TEST_CASE("cache_read: each input for each reader, alone and computed at its loops",
          "[e2e][schedule][cache_read]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    State naive(c.dag);
    for (int i = 0; i < static_cast<int>(c.dag.stages().size()); ++i) {
      const ir::Stage& s = c.dag.stage(i);
      for (int reader : c.dag.consumers(i)) {
        const ir::Stage& r = c.dag.stage(reader);
        std::string cache = s.name + ".cache";
        out.push_back(
            {fmt::format("cache_read {} for {}", s.name, r.name), {CacheReadStep{s.name, r.name}}});
        for (const Iterator& it : naive.find_stage(r.name)->iters)
          out.push_back({fmt::format("cache_read {} for {}, compute_at {}", s.name, r.name,
                                     name_of(r.name, it.name)),
                         {CacheReadStep{s.name, r.name}, ComputeAtStep{cache, r.name, it.name}}});
      }
    }
    return out;
  });
}

TEST_CASE("rfactor: each reduction axis, by a factor that divides and one that does not, its "
          "partial results vectorized or parallel",
          "[e2e][schedule][rfactor]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const ir::Stage& stage : c.dag.stages()) {
      const ir::Reduce* r = stage.reduction();
      if (!r)
        continue;
      for (const ir::IterVar& axis : r->axes) {
        std::vector<std::int64_t> factors;
        if (axis.extent >= 2)
          factors.push_back(axis.extent % 2 == 0 ? 2 : axis.extent);
        if (axis.extent >= 3)
          factors.push_back(axis.extent - 1); // never divides
        for (std::int64_t f : factors) {
          RfactorStep rfactor{stage.name, axis.name, f};
          const std::string rf = stage.name + ".rf", lane = axis.name + ".r";
          out.push_back({fmt::format("rfactor {}.{} by {}", stage.name, axis.name, f), {rfactor}});
          // The lanes innermost and vectorized: one accumulator per lane.
          State s(c.dag);
          s.rfactor(stage.name, axis.name, f);
          std::vector<std::string> order;
          for (const Iterator& it : s.find_stage(rf)->iters)
            if (it.name != lane)
              order.push_back(it.name);
          order.push_back(lane);
          out.push_back(
              {fmt::format("rfactor {}.{} by {}, lanes vectorized", stage.name, axis.name, f),
               {rfactor, ReorderStep{rf, order}, AnnotateStep{rf, lane, Annotation::Vectorize}}});
          // The partial results in parallel.
          out.push_back(
              {fmt::format("rfactor {}.{} by {}, lanes parallel", stage.name, axis.name, f),
               {rfactor, AnnotateStep{rf, lane, Annotation::Parallel}}});
        }
      }
    }
    return out;
  });
}

TEST_CASE("rfactor is refused where it cannot apply", "[e2e][schedule][rfactor]") {
  const OpCase& c = op_case("matmul");
  auto refused = [&](const std::vector<Step>& steps, const char* why) {
    auto state = State::replay(c.dag, steps);
    REQUIRE_FALSE(state.ok());
    CHECK_THAT(state.error().message(), Catch::Contains(why));
  };
  refused({RfactorStep{"A", "k", 2}}, "'A' is an input and has no loops");
  refused({RfactorStep{"C", "i", 2}},
          "'i' is not a reduction axis of it; its reduction axes are k");
  refused({RfactorStep{"C", "k", 1}}, "factor 1 must be from 2 to the axis's extent 9");
  refused({RfactorStep{"C", "k", 10}}, "factor 10 must be from 2");
  refused({SplitStep{"C", "i", {2}}, RfactorStep{"C", "k", 3}},
          "must come before its loops are transformed");
  refused({RfactorStep{"C", "k", 3}, RfactorStep{"C", "k.o", 2}}, "'k.o' is not a reduction axis");
}

TEST_CASE("parallel: each spatial loop", "[e2e][schedule][parallel]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c))
      for (const std::string& it : spatial_names(st))
        out.push_back({"parallel " + name_of(st.name, it),
                       {AnnotateStep{st.name, it, Annotation::Parallel}}});
    return out;
  });
}

TEST_CASE("vectorize: innermost, outer, and odd extents", "[e2e][schedule][vectorize]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c)) {
      for (const std::string& it : spatial_names(st))
        out.push_back({"vectorize " + name_of(st.name, it),
                       {AnnotateStep{st.name, it, Annotation::Vectorize}}});
      // The innermost spatial loop made innermost (reductions outward).
      std::vector<std::string> spatial = spatial_names(st);
      std::vector<std::string> order;
      for (const Iterator& it : st.iters)
        if (it.kind == IterKind::Reduce)
          order.push_back(it.name);
      order.insert(order.end(), spatial.begin(), spatial.end());
      std::string inner = spatial.back();
      const Iterator& inner_it = *st.find_iter(inner);
      if (order != iter_names(st))
        out.push_back(
            {fmt::format("reorder {} reductions outward, vectorize {}", st.name, inner),
             {ReorderStep{st.name, order}, AnnotateStep{st.name, inner, Annotation::Vectorize}}});
      // Odd vector widths, dividing the extent or not, innermost or not.
      for (std::int64_t width : {3, 5, 7, 17}) {
        std::string v = inner + ".1";
        out.push_back({fmt::format("split {} by {} (extent {}), vectorize {}", inner, width,
                                   inner_it.extent, v),
                       {SplitStep{st.name, inner, {width}},
                        AnnotateStep{st.name, v, Annotation::Vectorize}}});
        out.push_back({fmt::format("split {} by {}, vectorize the outer part", inner, width),
                       {SplitStep{st.name, inner, {width}},
                        AnnotateStep{st.name, inner + ".0", Annotation::Vectorize}}});
      }
    }
    return out;
  });
}

TEST_CASE("unroll: each loop", "[e2e][schedule][unroll]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c))
      for (const std::string& it : iter_names(st))
        out.push_back(
            {"unroll " + name_of(st.name, it), {AnnotateStep{st.name, it, Annotation::Unroll}}});
    return out;
  });
}

TEST_CASE("pragma auto_unroll_max_step", "[e2e][schedule][pragma]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c))
      for (std::int64_t v : {16, 64, 512})
        out.push_back({fmt::format("pragma {} auto_unroll_max_step={}", st.name, v),
                       {PragmaStep{st.name, v}}});
    return out;
  });
}

TEST_CASE("clearing an annotation", "[e2e][schedule][annotate]") {
  check_each([](const OpCase& c) {
    std::vector<NamedSchedule> out;
    for (const StageState& st : compute_stages(c)) {
      std::string it = spatial_names(st).front();
      out.push_back({"parallel then none " + name_of(st.name, it),
                     {AnnotateStep{st.name, it, Annotation::Parallel},
                      AnnotateStep{st.name, it, Annotation::None}}});
    }
    return out;
  });
}

// --- realistic schedules ---

namespace {

/// The tiled matmul of the README: a 4×16 register tile (C.local) computed
/// at the tile loop, its k split, i unrolled, j vectorized, the tile rows
/// parallel.
std::vector<Step> tiled_matmul() {
  return {
      CacheWriteStep{"C"},
      SplitStep{"C", "i", {4}},
      SplitStep{"C", "j", {16}},
      ReorderStep{"C", {"i.0", "j.0", "i.1", "j.1"}},
      ComputeAtStep{"C.local", "C", "j.0"},
      SplitStep{"C.local", "k", {4}},
      ReorderStep{"C.local", {"k.0", "k.1", "i", "j"}},
      AnnotateStep{"C.local", "i", Annotation::Unroll},
      AnnotateStep{"C.local", "j", Annotation::Vectorize},
      AnnotateStep{"C", "j.1", Annotation::Vectorize},
      AnnotateStep{"C", "i.0", Annotation::Parallel},
  };
}

} // namespace

TEST_CASE("realistic: the tiled matmul", "[e2e][schedule][realistic]") {
  SECTION("with tails (13×17×9)") {
    check_schedule(op_case("matmul"), tiled_matmul());
  }
  SECTION("dividing (64×48×32)") {
    check_schedule(op_case("matmul", {{"M", "64"}, {"N", "48"}, {"K", "32"}}), tiled_matmul());
  }
  SECTION("with B packed per k block") {
    std::vector<Step> steps = tiled_matmul();
    steps.push_back(CacheReadStep{"B", "C.local"});
    steps.push_back(ComputeAtStep{"B.cache", "C.local", "k.0"});
    steps.push_back(AnnotateStep{"B.cache", "ax1", Annotation::Vectorize});
    check_schedule(op_case("matmul", {{"M", "20"}, {"N", "35"}, {"K", "11"}}), steps);
  }
  SECTION("batch_matmul, batch and row tiles fused and parallel") {
    check_schedule(op_case("batch_matmul", {{"BATCH", "3"}, {"M", "9"}, {"N", "20"}, {"K", "6"}}),
                   {
                       CacheWriteStep{"C"},
                       SplitStep{"C", "i", {4}},
                       SplitStep{"C", "j", {8}},
                       ReorderStep{"C", {"b", "i.0", "j.0", "i.1", "j.1"}},
                       FuseStep{"C", {"b", "i.0"}},
                       ComputeAtStep{"C.local", "C", "j.0"},
                       ReorderStep{"C.local", {"b", "k", "i", "j"}},
                       AnnotateStep{"C.local", "j", Annotation::Vectorize},
                       AnnotateStep{"C.local", "i", Annotation::Unroll},
                       AnnotateStep{"C", "b@i.0", Annotation::Parallel},
                       AnnotateStep{"C", "j.1", Annotation::Vectorize},
                   });
  }
}

TEST_CASE("realistic: conv2d with the padding inlined, tiled", "[e2e][schedule][realistic]") {
  std::vector<Step> steps = {
      ComputeInlineStep{"padded"},
      CacheWriteStep{"conv"},
      SplitStep{"conv", "k", {2}},
      SplitStep{"conv", "y", {2}},
      SplitStep{"conv", "x", {4}},
      ReorderStep{"conv", {"n", "k.0", "y.0", "x.0", "k.1", "y.1", "x.1"}},
      FuseStep{"conv", {"n", "k.0"}},
      ComputeAtStep{"conv.local", "conv", "x.0"},
      ReorderStep{"conv.local", {"n", "rc", "ry", "rx", "k", "y", "x"}},
      AnnotateStep{"conv.local", "x", Annotation::Vectorize},
      AnnotateStep{"conv.local", "y", Annotation::Unroll},
      PragmaStep{"conv.local", 64},
      AnnotateStep{"conv", "n@k.0", Annotation::Parallel},
      AnnotateStep{"conv", "x.1", Annotation::Vectorize},
  };
  SECTION("stride 2, tails") {
    check_schedule(op_case("conv2d_nchw"), steps);
  }
  SECTION("stride 1, 8 channels, 10×12") {
    check_schedule(
        op_case("conv2d_nchw",
                {{"N", "1"}, {"C", "3"}, {"H", "10"}, {"W", "12"}, {"K", "8"}, {"stride", "1"}}),
        steps);
  }
  SECTION("the padding computed per row tile instead") {
    check_schedule(op_case("conv2d_nchw"),
                   {
                       SplitStep{"conv", "y", {2}},
                       ReorderStep{"conv", {"n", "k", "y.0", "rc", "y.1", "x", "ry", "rx"}},
                       ComputeAtStep{"padded", "conv", "y.0"},
                       AnnotateStep{"padded", "w", Annotation::Vectorize},
                   });
  }
  SECTION("depthwise, padding inlined, x vectorized") {
    check_schedule(op_case("depthwise_conv2d"),
                   {
                       ComputeInlineStep{"padded"},
                       SplitStep{"dwconv", "x", {4}},
                       ReorderStep{"dwconv", {"n", "c", "y", "x.0", "ry", "rx", "x.1"}},
                       AnnotateStep{"dwconv", "x.1", Annotation::Vectorize},
                       AnnotateStep{"dwconv", "c", Annotation::Parallel},
                   });
  }
  SECTION("max_pool2d, padding inlined, windows unrolled") {
    check_schedule(op_case("max_pool2d"), {
                                              ComputeInlineStep{"padded"},
                                              ReorderStep{"pool", {"n", "c", "ry", "rx", "y", "x"}},
                                              AnnotateStep{"pool", "ry", Annotation::Unroll},
                                              AnnotateStep{"pool", "rx", Annotation::Unroll},
                                              AnnotateStep{"pool", "x", Annotation::Vectorize},
                                              AnnotateStep{"pool", "c", Annotation::Parallel},
                                          });
  }
}

TEST_CASE("realistic: softmax with its row stages computed at the rows",
          "[e2e][schedule][realistic]") {
  SECTION("row_max and row_sum per row, rows parallel") {
    check_schedule(op_case("softmax"), {
                                           ComputeAtStep{"row_max", "exps", "i"},
                                           ComputeAtStep{"row_sum", "Y", "i"},
                                           AnnotateStep{"exps", "j", Annotation::Vectorize},
                                           AnnotateStep{"Y", "j", Annotation::Vectorize},
                                           AnnotateStep{"exps", "i", Annotation::Parallel},
                                           AnnotateStep{"Y", "i", Annotation::Parallel},
                                       });
  }
  SECTION("exps inlined into both readers") {
    check_schedule(op_case("softmax", {{"M", "7"}, {"N", "19"}}),
                   {
                       ComputeInlineStep{"exps"},
                       ComputeAtStep{"row_sum", "Y", "i"},
                       SplitStep{"Y", "j", {8}},
                       AnnotateStep{"Y", "j.1", Annotation::Vectorize},
                       AnnotateStep{"Y", "i", Annotation::Parallel},
                   });
  }
}

TEST_CASE("realistic: dense_bias_relu with bias and relu fused", "[e2e][schedule][realistic]") {
  const OpCase& c = op_case("dense_bias_relu", {{"BATCH", "5"}, {"IN", "13"}, {"OUT", "20"}});
  SECTION("biased inlined into relu, dense tiled with a register tile") {
    check_schedule(c, {
                          ComputeInlineStep{"biased"},
                          CacheWriteStep{"dense"},
                          SplitStep{"dense", "b", {2}},
                          SplitStep{"dense", "o", {8}},
                          ReorderStep{"dense", {"b.0", "o.0", "b.1", "o.1"}},
                          ComputeAtStep{"dense.local", "dense", "o.0"},
                          ReorderStep{"dense.local", {"i", "b", "o"}},
                          AnnotateStep{"dense.local", "o", Annotation::Vectorize},
                          AnnotateStep{"dense.local", "b", Annotation::Unroll},
                          AnnotateStep{"dense", "b.0", Annotation::Parallel},
                          SplitStep{"relu", "o", {8}},
                          AnnotateStep{"relu", "o.1", Annotation::Vectorize},
                          AnnotateStep{"relu", "b", Annotation::Parallel},
                      });
  }
  SECTION("biased inlined, dense computed per tile of relu (through the inlined stage)") {
    check_schedule(c, {
                          ComputeInlineStep{"biased"},
                          SplitStep{"relu", "b", {2}},
                          SplitStep{"relu", "o", {8}},
                          ReorderStep{"relu", {"b.0", "o.0", "b.1", "o.1"}},
                          ComputeAtStep{"dense", "relu", "o.0"},
                          ReorderStep{"dense", {"i", "b", "o"}},
                          AnnotateStep{"dense", "o", Annotation::Vectorize},
                          AnnotateStep{"dense", "b", Annotation::Unroll},
                          AnnotateStep{"relu", "o.1", Annotation::Vectorize},
                          AnnotateStep{"relu", "b.0", Annotation::Parallel},
                      });
  }
  SECTION("dense computed per row of biased, relu parallel") {
    check_schedule(c, {
                          ComputeAtStep{"dense", "biased", "b"},
                          ComputeAtStep{"biased", "relu", "b"},
                          AnnotateStep{"relu", "o", Annotation::Vectorize},
                          AnnotateStep{"relu", "b", Annotation::Parallel},
                      });
  }
}

TEST_CASE("realistic: transpose and row_sum tiles", "[e2e][schedule][realistic]") {
  SECTION("transpose in 4×4 tiles, A packed per tile") {
    check_schedule(op_case("transpose", {{"M", "18"}, {"N", "13"}}),
                   {
                       SplitStep{"B", "j", {4}},
                       SplitStep{"B", "i", {4}},
                       ReorderStep{"B", {"j.0", "i.0", "j.1", "i.1"}},
                       CacheReadStep{"A", "B"},
                       ComputeAtStep{"A.cache", "B", "i.0"},
                       AnnotateStep{"B", "i.1", Annotation::Vectorize},
                       AnnotateStep{"B", "j.0", Annotation::Parallel},
                   });
  }
  SECTION("row_sum with a register accumulator, rows vectorized") {
    check_schedule(op_case("row_sum", {{"M", "19"}, {"N", "10"}}),
                   {
                       CacheWriteStep{"S"},
                       SplitStep{"S", "i", {8}},
                       ComputeAtStep{"S.local", "S", "i.0"},
                       ReorderStep{"S.local", {"j", "i"}},
                       AnnotateStep{"S.local", "i", Annotation::Vectorize},
                       AnnotateStep{"S", "i.1", Annotation::Vectorize},
                   });
  }
}

// --- regressions: minimised schedules of bugs the property test found ---

TEST_CASE("regression: an element-wise stage inlined into a reduction",
          "[e2e][schedule][regression]") {
  // Lowering took a reduction's body from the DAG, not the inlined one: the
  // kernel loaded the inlined stage, which has no buffer (internal error).
  check_schedule(op_case("matmul"), {CacheReadStep{"A", "C"}, ComputeInlineStep{"A.cache"}});
  check_schedule(op_case("conv2d_nchw"), {ComputeInlineStep{"padded"}});
}

TEST_CASE("regression: cache_read of a stage computed at its reader is refused",
          "[e2e][schedule][regression]") {
  // The copy became the stage's only reader, at the root, while the stage
  // was still computed inside the old reader's loop (internal error: no
  // buffer in scope).
  const OpCase& c = op_case("matmul");
  State s(c.dag);
  s.cache_read("B", "C");
  s.compute_at("B.cache", "C", "k");
  auto err = s.apply(CacheReadStep{"B.cache", "C"});
  REQUIRE(err.has_value());
  CHECK_THAT(err->message(), Catch::Contains("compute it at the root first"));
  check_schedule(c, s.steps());
}

TEST_CASE("regression: a lane-uniform guard with a division in a vector loop",
          "[e2e][schedule][regression]") {
  // `a && b` with a division in b is emitted as a branch; in a vector loop
  // both sides were broadcast even when the condition was the same for all
  // lanes, and the vector became a branch condition (LLVM verifier error).
  check_schedule(op_case("batch_matmul"), {
                                              CacheReadStep{"A", "C"},
                                              SplitStep{"A.cache", "ax2", {2}},
                                              FuseStep{"A.cache", {"ax2.0", "ax2.1"}},
                                              ComputeAtStep{"A.cache", "C", "b"},
                                              AnnotateStep{"A.cache", "ax1", Annotation::Vectorize},
                                          });
}

TEST_CASE("regression: a region read whole in one dimension shrinks in the others",
          "[e2e][schedule][regression]") {
  // Bound inference gave up on every dimension when one was read whole:
  // A.cache, computed per column of C, held all of A.
  const OpCase& c = op_case("batch_matmul");
  State s(c.dag);
  s.cache_read("A", "C");
  s.compute_at("A.cache", "C", "j");
  std::string text = to_string(lower(s));
  CHECK_THAT(text, Catch::Contains("allocate A.cache: f32[1, 1, 3] (local)"));
  check_schedule(c, s.steps());
}

TEST_CASE("regression: a step that leaves a stage computed where nothing reads it is refused",
          "[e2e][schedule][regression]") {
  // dense computed at relu through the inlined biased; a cache_read of
  // biased for relu made biased.cache (at the root) dense's reader, while
  // dense was still computed inside relu (internal error: no buffer named
  // dense in scope).
  const OpCase& c = op_case("dense_bias_relu");
  State s(c.dag);
  s.compute_inline("biased");
  s.compute_at("dense", "relu", "b");
  auto err = s.apply(CacheReadStep{"biased", "relu"});
  REQUIRE(err.has_value());
  CHECK_THAT(err->message(), Catch::Contains("where not all its readers would be"));
  check_schedule(c, s.steps());
}

TEST_CASE("regression: a fully unrolled conv tile that LLVM's SLP vectorizer miscompiled",
          "[e2e][schedule][regression]") {
  // conv.local's whole tile unrolled into 432 scalar updates reading the
  // padded window and the copied kernel at constant offsets; LLVM 19's SLP
  // vectorizer packed those loads into 8- and 16-lane gathers and the last
  // output row came out wrong (now off: lib/codegen/compiler.cpp).
  check_schedule(op_case("conv2d_nchw"),
                 {
                     CacheWriteStep{"conv"},
                     CacheReadStep{"kernel", "conv.local"},
                     SplitStep{"conv", "n", {1}},
                     SplitStep{"conv", "k", {4}},
                     SplitStep{"conv", "y", {4}},
                     SplitStep{"conv", "x", {1}},
                     ReorderStep{"conv", {"n.0", "k.0", "y.0", "x.0", "n.1", "k.1", "y.1", "x.1"}},
                     SplitStep{"conv.local", "n", {1, 1}},
                     ComputeAtStep{"conv.local", "conv", "x.0"},
                     PragmaStep{"conv.local", 512},
                     ComputeAtStep{"padded", "conv.local", "n.0"},
                 });
}
