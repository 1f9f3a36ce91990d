#include "../../../lib/space/sketch_rules.h"
#include "../ir/test_dags.h"
#include "../schedule/loop_count.h"

#include "kiln/ir/builder.h"
#include "kiln/ir/parser.h"
#include "kiln/schedule/lower.h"
#include "kiln/space/factorization.h"
#include "kiln/space/sketch.h"
#include "kiln/space/space_params.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <numeric>
#include <set>

using namespace kiln;
using namespace kiln::space;

/// A config of sketch `sketch`: its tile factors, parallel depths and
/// unroll steps.
static SketchConfig config_of(int sketch, std::vector<std::vector<std::int64_t>> tiles,
                              std::vector<int> parallel, std::vector<std::int64_t> unroll) {
  SketchConfig c;
  c.sketch = sketch;
  c.tiles = std::move(tiles);
  c.parallel = std::move(parallel);
  c.unroll = std::move(unroll);
  return c;
}

/// The sketch space of ops/OP.kop at its defaults, for 16 lanes and 2 cores.
static SketchSpace op_space(const char* op) {
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + op + ".kop");
  REQUIRE(dag.ok());
  return SketchSpace(*dag, SpaceParams{16, 2, 64});
}

TEST_CASE("a machine's space params are its f32 vector lanes and its cores", "[space]") {
  Target avx512;
  avx512.vector_bits = 512;
  avx512.cores = 8;
  const SpaceParams p = space_params(avx512);
  CHECK(p.vector_lanes == 16);
  CHECK(p.cores == 8);
  CHECK(p.max_innermost_factor == SpaceParams{}.max_innermost_factor);
  CHECK(p.max_pack_depth == SpaceParams{}.max_pack_depth);
  CHECK(space_params(Target{}).vector_lanes == 1); // no vector unit: scalar loops
}

TEST_CASE("factorizations are exact, ordered and respect the innermost limit",
          "[space][factorization]") {
  const auto& f = factorizations(12, 3, 4);
  for (const auto& v : f) {
    REQUIRE(v.size() == 3);
    REQUIRE(std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>()) == 12);
    REQUIRE(v.back() <= 4);
  }
  // 12 = 2^2*3 in 3 ordered factors: 18 ways.
  REQUIRE(f.size() == 18 - 2 - 1);                // innermost 6: 2 ways; innermost 12: 1 way
  REQUIRE(&factorizations(12, 3, 4) == &f);       // cached
  REQUIRE(factorizations(97, 2, 64).size() == 1); // a prime: only 97 x 1
}

TEST_CASE("factorizations can keep the innermost factor a whole number of vectors",
          "[space][factorization]") {
  // 64 = 2^6 in 4 ordered factors: 84 ways; innermost 16, 32 or 64 in 10.
  REQUIRE(factorizations(64, 4, 64).size() == 84);
  const auto& whole = factorizations(64, 4, 64, 16);
  REQUIRE(whole.size() == 6 + 3 + 1);
  for (const auto& v : whole)
    CHECK(v.back() % 16 == 0);
  // None qualifies (56 is 3.5 vectors): the one-loop tiling, as for a limit.
  REQUIRE(factorizations(56, 4, 64, 16) == std::vector<std::vector<std::int64_t>>{{56, 1, 1, 1}});
}

TEST_CASE("tilings add tails where exact factorizations are few", "[space][factorization]") {
  // 97 is prime: exactly one factorization, and tilings of 98, 100 and 104
  // (at most an eighth more) with the outer count recomputed.
  const auto& prime = tilings(97, 4, 64, 1, 1);
  REQUIRE(prime.front() == factorizations(97, 4, 64).front());
  REQUIRE(std::set<std::vector<std::int64_t>>(prime.begin(), prime.end()).size() == prime.size());
  for (const auto& f : prime) {
    REQUIRE(is_tiling(97, f));
    CHECK(f.back() <= 64);
    CHECK(f[0] * f[1] * f[2] * f[3] <= 97 + 97 / 8);
  }
  for (std::vector<std::int64_t> f :
       {std::vector<std::int64_t>{13, 1, 1, 8}, {49, 1, 1, 2}, {7, 1, 2, 7}, {4, 5, 1, 5}})
    CHECK(std::count(prime.begin(), prime.end(), f) == 1);
  CHECK(std::count(prime.begin(), prime.end(), std::vector<std::int64_t>{7, 1, 1, 16}) == 0);
  REQUIRE(&tilings(97, 4, 64, 1, 1) == &prime); // cached

  // A vector axis of 1000 (62.5 vectors) gets whole vectors with a tail; a
  // short one gets one masked vector.
  const auto& vector_axis = tilings(1000, 4, 64, 1, 16);
  int whole_vectors = 0;
  for (const auto& f : vector_axis)
    if (f[0] * f[1] * f[2] * f[3] != 1000) {
      CHECK(f.back() % 16 == 0);
      whole_vectors += f.back() % 16 == 0;
    }
  CHECK(whole_vectors > 0);
  CHECK(
      std::count(vector_axis.begin(), vector_axis.end(), std::vector<std::int64_t>{63, 1, 1, 16}));
  CHECK(std::count(tilings(10, 2, 64, 1, 16).begin(), tilings(10, 2, 64, 1, 16).end(),
                   std::vector<std::int64_t>{1, 16}) == 1);

  // Powers of two and whole vectors: nothing to round up.
  CHECK(tilings(512, 4, 64, 16, 16) == factorizations(512, 4, 64, 16));
  CHECK(tilings(64, 4, 64, 1, 1) == factorizations(64, 4, 64));
}

TEST_CASE("is_tiling: the outer factor is the count of outer iterations",
          "[space][factorization]") {
  CHECK(is_tiling(97, {13, 8}));
  CHECK(is_tiling(96, {12, 8}));
  CHECK_FALSE(is_tiling(97, {12, 8})); // misses the last element
  CHECK_FALSE(is_tiling(97, {14, 8})); // an iteration with nothing to do
  CHECK_FALSE(is_tiling(97, {0, 8}));
  CHECK_FALSE(is_tiling(97, {1, -1}));
  CHECK_FALSE(is_tiling(97, {}));
  CHECK_FALSE(is_tiling(97, {1, std::int64_t{1} << 40, std::int64_t{1} << 40}));
}

TEST_CASE("an odd-sized matmul is tiled and vectorized with tails, within the space",
          "[space][sample]") {
  // 97 x 101 x 89: every extent prime, so without tails no axis has a tile
  // and j cannot be vectorized in whole vectors.
  ir::ComputeDAG dag = test::matmul_dag(97, 101, 89);
  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  std::mt19937_64 rng(21);
  std::set<std::int64_t> j_inner;
  int tailed = 0, configs = 0;
  for (int i = 0; i < 200; ++i) {
    SketchConfig c = sp.sample(rng);
    for (int m = 0; m < 5; ++m, c = sp.mutate(c, rng)) {
      ++configs;
      const Sketch& sk = sp.sketches()[c.sketch];
      bool tail = false;
      for (size_t t = 0; t < c.tiles.size(); ++t) {
        REQUIRE(sk.axes()[t].admits(c.tiles[t]));
        tail = tail || std::accumulate(c.tiles[t].begin(), c.tiles[t].end(), std::int64_t{1},
                                       std::multiplies<>()) != sk.axes()[t].extent;
        if (sk.axes()[t].axis == "j")
          j_inner.insert(c.tiles[t].back());
      }
      tailed += tail;
      auto back = sp.unflatten(sp.flatten(c));
      REQUIRE(back.has_value());
      REQUIRE(*back == c);
      REQUIRE(sp.state(c).ok());
    }
  }
  CHECK(tailed > configs / 2);
  for (std::int64_t vectors : {16, 32, 48, 64})
    CHECK(j_inner.count(vectors) == 1);

  // Every mutation of a tailed config is one of its neighbours.
  SketchConfig c = sp.sample(0, rng);
  const int j =
      static_cast<int>(std::find_if(sp.sketches()[0].axes().begin(), sp.sketches()[0].axes().end(),
                                    [](const TileAxis& a) { return a.axis == "j"; }) -
                       sp.sketches()[0].axes().begin());
  c.tiles[j] = {7, 1, 1, 16};
  std::set<std::vector<std::int64_t>> near;
  for (const auto& [decision, n] : sp.neighbours(c)) {
    REQUIRE(near.insert(sp.flatten(n)).second);
    for (size_t t = 0; t < n.tiles.size(); ++t)
      REQUIRE(sp.sketches()[0].axes()[t].admits(n.tiles[t]));
  }
  CHECK(near.count(sp.flatten([&] {
    SketchConfig d = c;
    d.tiles[j] = {3, 1, 1, 48}; // resized: 48 lanes, 144 rounded up
    return d;
  }())) == 1);
  for (int i = 0; i < 300; ++i) {
    SketchConfig m = sp.mutate(c, rng);
    if (sp.flatten(m) != sp.flatten(c))
      REQUIRE(near.count(sp.flatten(m)) == 1);
  }

  // A tiling that misses elements is no config; without tails, none has one.
  SketchConfig bad = c;
  bad.tiles[j] = {6, 1, 1, 16};
  CHECK_FALSE(sp.unflatten(sp.flatten(bad)).has_value());
  SpaceParams exact{16, 2, 64};
  exact.tail_tiles = false;
  SketchSpace whole(dag, exact);
  CHECK_FALSE(whole.unflatten(sp.flatten(c)).has_value());
  for (int i = 0; i < 100; ++i) {
    SketchConfig w = whole.sample(rng);
    for (size_t t = 0; t < w.tiles.size(); ++t)
      CHECK(std::accumulate(w.tiles[t].begin(), w.tiles[t].end(), std::int64_t{1},
                            std::multiplies<>()) == whole.sketches()[w.sketch].axes()[t].extent);
  }
}

TEST_CASE("matmul has four sketches, dense+bias+relu fuses into its consumer", "[space][sketch]") {
  SketchSpace mm(test::matmul_dag(64, 64, 64), SpaceParams{});
  REQUIRE(mm.sketches().size() == 4);
  REQUIRE(mm.sketches()[0].name() == "C tiled in C.local at level 1");
  REQUIRE(mm.sketches()[2].name() == "C tiled in place");
  REQUIRE(mm.sketches()[3].name() == "C tiled in C.local at level 1, B packed");
  const auto& packed = std::get<MultiLevelPlan>(mm.sketches()[3].plans().at(0));
  REQUIRE(packed.packing);
  CHECK(packed.packing->input == "B");
  CHECK(packed.packing->axes == std::vector<std::string>{"j"});
  CHECK(packed.packing->inner == "ax1");
  CHECK_FALSE(packed.weight_vectorization);

  ir::DAGBuilder b("dense_bias_relu");
  auto X = b.input("X", {8, 16});
  auto W = b.input("W", {32, 16});
  auto bias = b.input("bias", {32});
  ir::IterVar k{"k", 16};
  auto D = b.compute("dense", {{"b", 8}, {"o", 32}}, [&](const std::vector<ir::Expr>& v) {
    return ir::sum(X(v[0], ir::var(k)) * W(v[1], ir::var(k)), {k});
  });
  auto B = b.compute("biased", {{"b", 8}, {"o", 32}},
                     [&](const std::vector<ir::Expr>& v) { return D(v[0], v[1]) + bias(v[1]); });
  auto R = b.compute("out", {{"b", 8}, {"o", 32}},
                     [&](const std::vector<ir::Expr>& v) { return ir::max(B(v[0], v[1]), 0.0); });
  b.output(R);
  SketchSpace dbr(std::move(b).build(), SpaceParams{});
  REQUIRE(dbr.sketches().size() == 2);
  REQUIRE(dbr.sketches()[0].name() == "dense tiled, fused into out at level 1");
  const auto& plans = dbr.sketches()[0].plans();
  REQUIRE(plans.size() == 3);
  REQUIRE(std::holds_alternative<MultiLevelPlan>(plans[0]));
  REQUIRE(std::holds_alternative<InlinePlan>(plans[1])); // biased
  REQUIRE(std::holds_alternative<OuterPlan>(plans[2]));
  CHECK(stage_of(plans[2]) == "out");
  const auto& dense = std::get<MultiLevelPlan>(plans[0]);
  CHECK(dense.tiled == "dense");
  CHECK(dense.outer == "out");
  CHECK(dense.level == 1);
  CHECK_FALSE(dense.cache_write);
}

TEST_CASE("the rule list derives each op's sketches in order", "[space][sketch]") {
  // Sketch numbers are stored in tuning logs: the rules must keep deriving
  // these names in this order.
  const std::map<std::string, std::vector<std::string>> expected = {
      {"matmul",
       {"C tiled in C.local at level 1", "C tiled in C.local at level 2", "C tiled in place",
        "C tiled in C.local at level 1, B packed"}},
      {"conv2d_nchw",
       {"conv tiled in conv.local at level 1", "conv tiled in conv.local at level 2",
        "conv tiled in place",
        "conv tiled in conv.local at level 1, vectorized over k, kernel copied with k innermost"}},
      {"dense_bias_relu",
       {"dense tiled, fused into relu at level 1", "dense tiled, fused into relu at level 2"}},
  };
  for (const auto& [op, names] : expected) {
    INFO(op);
    auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + op + ".kop");
    REQUIRE(dag.ok());
    std::vector<std::string> derived;
    for (const Draft& d : derive_drafts(Analysis(*dag)))
      derived.push_back(d.name);
    CHECK(derived == names);
    const SketchSpace space(*dag, SpaceParams{16, 2, 64});
    std::vector<std::string> sketches;
    for (const Sketch& sk : space.sketches())
      sketches.push_back(sk.name());
    CHECK(sketches == names);
  }
  // The plans of a draft in the order the rules add them, output first:
  // relu's simple tiling, biased inlined, then dense fused into relu, which
  // takes relu's plan over.
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/dense_bias_relu.kop");
  REQUIRE(dag.ok());
  const Draft first = derive_drafts(Analysis(*dag)).at(0);
  REQUIRE(first.plans.size() == 3);
  CHECK(std::holds_alternative<InlinePlan>(first.plans[0]));
  CHECK(stage_of(first.plans[0]) == "biased");
  CHECK(std::holds_alternative<MultiLevelPlan>(first.plans[1]));
  CHECK(stage_of(first.plans[1]) == "dense");
  CHECK(std::holds_alternative<OuterPlan>(first.plans[2]));
  CHECK(stage_of(first.plans[2]) == "relu");
  // An op without data reuse gets a first sketch of simple tilings, named
  // so by the space; each long row reduction read along memory (softmax's
  // row_max and row_sum over 1000 classes) is also rfactored, every
  // combination a sketch after it.
  auto softmax = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/softmax.kop");
  REQUIRE(softmax.ok());
  const std::vector<Draft> drafts = derive_drafts(Analysis(*softmax));
  REQUIRE(drafts.size() == 5);
  CHECK(drafts[0].name.empty());
  for (const StagePlan& p : drafts[0].plans)
    CHECK((std::holds_alternative<SimplePlan>(p) || std::holds_alternative<InlinePlan>(p)));
  SketchSpace sp(*softmax, SpaceParams{});
  std::vector<std::string> names;
  for (const Sketch& sk : sp.sketches())
    names.push_back(sk.name());
  CHECK(names == std::vector<std::string>{
                     "simple", "row_max rfactored along j", "row_sum rfactored along j",
                     "row_sum rfactored along j, row_max rfactored along j",
                     "row_sum rfactored along j, row_max rfactored along j, rows fused at Y"});
  for (const StagePlan& p : drafts[3].plans)
    if (const auto* rf = std::get_if<RfactorPlan>(&p))
      CHECK(rf->spatial_axes == std::vector<std::string>{"i"});
  // Its factor is 1 to 4 whole vectors, with a tail over 1000.
  std::set<std::int64_t> factors;
  std::mt19937_64 rng(4);
  for (int i = 0; i < 200; ++i) {
    SketchConfig c = sp.sample(3, rng);
    for (size_t t = 0; t < c.tiles.size(); ++t)
      if (sp.sketches()[3].axes()[t].axis == "j" && sp.sketches()[3].axes()[t].reduce)
        factors.insert(c.tiles[t].back());
    REQUIRE(sp.state(c).ok());
  }
  CHECK(factors == std::set<std::int64_t>{16, 32, 48, 64});
  // A short reduction (a 3x3 pooling window, a 24-long row) is not
  // rfactored.
  auto pool = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/max_pool2d.kop");
  REQUIRE(pool.ok());
  CHECK(derive_drafts(Analysis(*pool)).size() == 1);
  auto short_rows =
      ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/row_sum.kop", {{"N", "24"}});
  REQUIRE(short_rows.ok());
  CHECK(derive_drafts(Analysis(*short_rows)).size() == 1);
  // A batch-1 dense layer reads each weight once: besides its fused tilings
  // it is rfactored along its input features, read along the weight's rows
  // (its row twin follows). With a batch of 16 the weight is reused and
  // register tiles pay: no rfactor.
  for (const char* batch : {"1", "16"}) {
    auto dense = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/dense_bias_relu.kop",
                                   {{"BATCH", batch}, {"IN", "768"}, {"OUT", "1000"}});
    REQUIRE(dense.ok());
    std::vector<std::string> dense_names;
    for (const Draft& d : derive_drafts(Analysis(*dense)))
      dense_names.push_back(d.name);
    INFO("batch " << batch);
    if (std::string(batch) == "1")
      CHECK(dense_names == std::vector<std::string>{"dense tiled, fused into relu at level 1",
                                                    "dense tiled, fused into relu at level 2",
                                                    "dense rfactored along i",
                                                    "dense rfactored along i, rows fused at relu"});
    else
      CHECK(dense_names == std::vector<std::string>{"dense tiled, fused into relu at level 1",
                                                    "dense tiled, fused into relu at level 2"});
  }
}

TEST_CASE("conv2d gets a sketch vectorized over its output channels, matmul and depthwise do not",
          "[space][sketch]") {
  SketchSpace conv = op_space("conv2d_nchw");
  REQUIRE(conv.sketches().size() == 4);
  const Sketch& sk = conv.sketches()[3];
  REQUIRE(sk.name() ==
          "conv tiled in conv.local at level 1, vectorized over k, kernel copied with k innermost");
  // The kernel copy and the padding are stages without decisions; the
  // padding is not inlined (a select per broadcast element) but computed
  // inside each tile of conv.local.
  std::map<std::string, const StagePlan*> plans;
  for (const StagePlan& p : sk.plans())
    plans[stage_of(p)] = &p;
  const auto* kernel = std::get_if<RootPlan>(plans.at("kernel.cache"));
  const auto* padded = std::get_if<RootPlan>(plans.at("padded"));
  const auto* conv_plan = std::get_if<MultiLevelPlan>(plans.at("conv"));
  REQUIRE(kernel);
  REQUIRE(padded);
  REQUIRE(conv_plan);
  CHECK(kernel->inside.empty());
  CHECK(padded->inside == "conv.local");
  REQUIRE(conv_plan->weight_vectorization);
  CHECK(conv_plan->weight_vectorization->axis == "k");
  CHECK(conv_plan->weight_vectorization->weights == "kernel");
  CHECK_FALSE(conv_plan->packing);
  for (const TileAxis& a : sk.axes())
    CHECK(a.stage == "conv");
  // Every config vectorizes k in the register tile, x in the copy-out, and
  // k's innermost tile is capped as a vector is (4 vectors), x's is not.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i) {
    SketchConfig c = conv.sample(3, rng);
    std::string steps = schedule::steps_to_json(conv.steps(c));
    for (const TileAxis& a : sk.axes())
      if (a.axis == "k" || a.axis == "x")
        CHECK(a.max_innermost == 64);
    if (c.tiles[1].back() > 1) // conv.k
      CHECK_THAT(steps,
                 Catch::Contains(R"({"iter":"k.2","stage":"conv.local","step":"vectorize"})"));
    CHECK_THAT(steps,
               Catch::Contains(R"({"reader":"conv.local","stage":"kernel","step":"cache_read"})"));
    CHECK_THAT(steps,
               Catch::Contains(
                   R"({"iter":"n.0","stage":"padded","step":"compute_at","target":"conv.local"})"));
    CHECK_THAT(steps, Catch::Contains(R"({"iter":"w","stage":"padded","step":"vectorize"})"));
    REQUIRE(conv.state(c).ok());
  }
  // matmul's B is packed instead; depthwise's data is read along c too, so
  // its loads would be gathers.
  for (const char* op : {"matmul", "depthwise_conv2d", "batch_matmul"}) {
    SketchSpace other = op_space(op);
    for (const Sketch& o : other.sketches())
      CHECK(o.name().find("vectorized over") == std::string::npos);
  }
}

TEST_CASE("sampling is seeded, configs flatten and mutate within the space", "[space][sample]") {
  SketchSpace sp(test::matmul_dag(64, 48, 32), SpaceParams{16, 2, 64});
  std::mt19937_64 a(5), b(5), rng(9);
  for (int i = 0; i < 50; ++i) {
    SketchConfig x = sp.sample(a);
    REQUIRE(x == sp.sample(b));
    auto back = sp.unflatten(sp.flatten(x));
    REQUIRE(back.has_value());
    REQUIRE(*back == x);
    SketchConfig m = x;
    for (int step = 0; step < 20; ++step) {
      m = sp.mutate(m, rng);
      const Sketch& sk = sp.sketches()[m.sketch];
      for (size_t t = 0; t < m.tiles.size(); ++t)
        REQUIRE(std::accumulate(m.tiles[t].begin(), m.tiles[t].end(), std::int64_t{1},
                                std::multiplies<>()) == sk.axes()[t].extent);
      REQUIRE(schedule::State::replay(sp.dag(), sp.steps(m)).ok());
    }
    SketchConfig y = sp.sample(rng);
    if (y.sketch == x.sketch)
      REQUIRE(schedule::State::replay(sp.dag(), sp.steps(sp.crossover(x, y, rng))).ok());
  }
  REQUIRE_FALSE(sp.unflatten({7}).has_value());
}

/// The loop nest with loop variables renamed by order of appearance, so that
/// nests that differ only in loop names compare equal.
static schedule::Stmt canonical(const schedule::Stmt& s, int& next) {
  using namespace schedule;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto* f = s.as<For>();
    std::string name = "L" + std::to_string(next++);
    Stmt body = substitute(canonical(f->body, next), {{f->var, ir::Var::make(name)}});
    return For::make(name, f->extent, f->for_kind, body);
  }
  case StmtKind::Store:
    return s;
  case StmtKind::Allocate: {
    const auto* a = s.as<Allocate>();
    return Allocate::make(a->buffer, canonical(a->body, next));
  }
  case StmtKind::IfThenElse: {
    const auto* i = s.as<IfThenElse>();
    return IfThenElse::make(i->cond, canonical(i->then_case, next),
                            i->else_case.defined() ? canonical(i->else_case, next) : Stmt());
  }
  case StmtKind::Block: {
    std::vector<Stmt> stmts;
    for (const Stmt& c : s.as<Block>()->stmts)
      stmts.push_back(canonical(c, next));
    return Block::make(stmts);
  }
  }
  return s;
}

static std::string canonical_nest(const schedule::State& state) {
  schedule::LoweredFunc f = schedule::lower(state);
  int next = 0;
  f.body = canonical(f.body, next);
  return schedule::to_string(f);
}

TEST_CASE("the register tile runs the broadcast operands' axes outside the vector operands'",
          "[space][sketch]") {
  using Axes = std::vector<std::string>;
  // conv2d_nchwc's data element is broadcast along ki and read along n, y
  // and x; its kernel is a vector read along kb. The op lists kb before y
  // and x; the register tile must not, or a row of x broadcasts stays live
  // beside the accumulators.
  SketchSpace blocked = op_space("conv2d_nchwc");
  int tiled = 0;
  for (size_t s = 0; s < blocked.sketches().size(); ++s) {
    const Sketch& sk = blocked.sketches()[s];
    std::string tiled_stage;
    for (const StagePlan& plan : sk.plans())
      if (const auto* p = std::get_if<MultiLevelPlan>(&plan)) {
        CHECK(p->broadcast_axes == Axes{"n", "y", "x"});
        tiled_stage = p->tiled;
        ++tiled;
      }
    if (tiled_stage.empty())
      continue;
    std::mt19937_64 rng(3);
    SketchConfig c = blocked.sample(static_cast<int>(s), rng);
    auto state = blocked.state(c);
    REQUIRE(state.ok());
    // The innermost loops of the tiled stage: ..., x, kb, ki.
    REQUIRE(state->find_stage(tiled_stage));
    const auto& iters = state->find_stage(tiled_stage)->iters;
    REQUIRE(iters.size() >= 3);
    auto axis = [&](size_t from_end) {
      const std::string& name = iters[iters.size() - from_end].name;
      return name.substr(0, name.find('.'));
    };
    INFO(sk.name());
    CHECK(axis(1) == "ki");
    CHECK(axis(2) == "kb");
    CHECK(axis(3) == "x");
  }
  CHECK(tiled >= 3);
  // Where the op's order already is that order, the rule keeps it: matmul's
  // A broadcasts along j, conv2d_nchw's padded input along k.
  SketchSpace matmul = op_space("matmul"), conv = op_space("conv2d_nchw");
  for (const StagePlan& plan : matmul.sketches()[0].plans())
    if (const auto* p = std::get_if<MultiLevelPlan>(&plan))
      CHECK(p->broadcast_axes == Axes{"i"});
  for (const StagePlan& plan : conv.sketches()[3].plans())
    if (const auto* p = std::get_if<MultiLevelPlan>(&plan))
      CHECK(p->broadcast_axes == Axes{"n", "y", "x"});
}

TEST_CASE("the hand-written matmul schedule is a member of the sketch space", "[space][sketch]") {
  // A 4x16 register tile in C.local computed at C's j.0, k split by 4, the
  // tile rows and the inner k loop unrolled, vectors of 16.
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  schedule::State hand(dag);
  hand.cache_write("C");
  hand.split("C", "i", {4});
  hand.split("C", "j", {16});
  hand.reorder("C", {"i.0", "j.0", "i.1", "j.1"});
  hand.compute_at("C.local", "C", "j.0");
  hand.split("C.local", "k", {4});
  hand.reorder("C.local", {"k.0", "k.1", "i", "j"});
  hand.unroll("C.local", "k.1");
  hand.unroll("C.local", "i");
  hand.vectorize("C.local", "j");
  hand.vectorize("C", "j.1");
  hand.parallel("C", "i.0");

  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  // Sketch 0 (level 1) with i = 16x1x1x4, j = 4x1x1x16, k = 16x4, parallel
  // over i.0 only, and an auto-unroll step that unrolls the 4 tile rows.
  SketchConfig c = config_of(0, {{16, 1, 1, 4}, {4, 1, 1, 16}, {16, 4}}, {1}, {16});
  auto from_space = schedule::State::replay(dag, sp.steps(c));
  REQUIRE(from_space.ok());
  REQUIRE(canonical_nest(*from_space) == canonical_nest(hand));
}

TEST_CASE("the benchmark's matmul 1024 schedule, B packed, is a member of the sketch space",
          "[space][sketch]") {
  // bench/schedules/matmul_1024.json (the hand-tuned schedule) with two
  // differences: it splits C's 256-wide copy-out loop by 32 before
  // vectorising it, where the sketch vectorises that loop whole; and it
  // leaves B's panel copy to LLVM's loop vectorizer, where the sketch
  // vectorises it (an unroll pragma would expand it into scalar copies).
  ir::ComputeDAG dag = test::matmul_dag(1024, 1024, 1024);
  schedule::State hand(dag);
  hand.cache_write("C");
  hand.split("C", "i", {256});
  hand.split("C", "j", {256});
  hand.reorder("C", {"i.0", "j.0", "i.1", "j.1"});
  hand.vectorize("C", "j.1");
  hand.parallel("C", "i.0");
  hand.compute_at("C.local", "C", "j.0");
  hand.split("C.local", "i", {8});
  hand.split("C.local", "j", {32});
  hand.split("C.local", "k", {256});
  hand.reorder("C.local", {"k.0", "j.0", "i.0", "k.1", "i.1", "j.1"});
  hand.unroll("C.local", "i.1");
  hand.vectorize("C.local", "j.1");
  hand.cache_read("B", "C.local");
  hand.compute_at("B.cache", "C.local", "j.0");
  hand.vectorize("B.cache", "ax1");

  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  REQUIRE(sp.sketches().size() == 4);
  // Sketch 3: i = 4 x 1 x 32 x 8, j = 4 x 1 x 8 x 32, k = 4 x 256, only
  // C's i.0 parallel, an unroll step that unrolls the 8 tile rows.
  SketchConfig c = config_of(3, {{4, 1, 32, 8}, {4, 1, 8, 32}, {4, 256}}, {1}, {16});
  auto from_space = schedule::State::replay(dag, sp.steps(c));
  REQUIRE(from_space.ok());
  REQUIRE(canonical_nest(*from_space) == canonical_nest(hand));
}

TEST_CASE("the packed panel is copied in vectors, whatever the unroll step", "[space][sketch]") {
  // Left to LLVM's loop vectorizer, the copy's inner loop would be expanded
  // by an unroll step of 512 into 64 scalar copies that LLVM does not
  // vectorize again.
  ir::ComputeDAG dag = test::matmul_dag(1024, 1024, 1024);
  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  REQUIRE(sp.sketches()[3].name() == "C tiled in C.local at level 1, B packed");
  SketchConfig c = config_of(3, {{8, 1, 32, 4}, {4, 1, 4, 64}, {8, 128}}, {2}, {512});
  auto state = schedule::State::replay(dag, sp.steps(c));
  REQUIRE(state.ok());
  const std::string nest = schedule::to_string(schedule::lower(*state));
  CAPTURE(nest);
  CHECK(nest.find("vectorized for B.cache.ax1 in 0..64") != std::string::npos);
  CHECK(nest.find("B.cache[B.cache.ax0, 1] =") == std::string::npos);
  // Every sampled config of the sketch vectorizes its copy.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 50; ++i) {
    SketchConfig p = sp.sample(3, rng);
    bool vectorized = false;
    for (const schedule::Step& step : sp.steps(p))
      if (const auto* a = std::get_if<schedule::AnnotateStep>(&step))
        vectorized = vectorized || (a->stage == "B.cache" && a->iter == "ax1");
    CHECK(vectorized);
  }
}

TEST_CASE("the packed sketch samples reduction blocks deeper than a register tile",
          "[space][sample]") {
  // The packed panel's k block is a cache block (the benchmark schedule's
  // is 256): max_pack_depth caps it, max_innermost_factor caps the rest.
  ir::ComputeDAG dag = test::matmul_dag(1024, 1024, 1024);
  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  REQUIRE(sp.sketches().size() == 4);
  std::mt19937_64 rng(7);
  std::int64_t deepest_packed = 0, deepest_other = 0;
  for (int i = 0; i < 2000; ++i) {
    SketchConfig c = sp.sample(rng);
    std::int64_t k_inner = c.tiles.back().back(); // C.k is the last tile axis
    (c.sketch == 3 ? deepest_packed : deepest_other) =
        std::max(c.sketch == 3 ? deepest_packed : deepest_other, k_inner);
  }
  CHECK(deepest_packed == 512);
  CHECK(deepest_other == 64);
}

TEST_CASE("one mutation moves any divisor of a tile factor, as Ansor's does", "[space][sample]") {
  // The packed panel's k block goes from 16 to 256 in one step (moving 16
  // of the outer 64), not in four steps of 2 that the model must each score
  // well; and every mutated tile still multiplies to its extent.
  ir::ComputeDAG dag = test::matmul_dag(1024, 1024, 1024);
  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  std::mt19937_64 rng(5);
  SketchConfig c = sp.sample(3, rng);
  REQUIRE(c.sketch == 3);
  c.tiles.back() = {64, 16}; // C.k: outer 64, k block 16
  std::set<std::int64_t> blocks;
  for (int i = 0; i < 3000; ++i) {
    SketchConfig d = sp.mutate(c, rng);
    for (size_t t = 0; t < d.tiles.size(); ++t) {
      std::int64_t product = 1;
      for (std::int64_t f : d.tiles[t])
        product *= f;
      REQUIRE(product == sp.sketches()[3].axes()[t].extent);
      REQUIRE(d.tiles[t].back() <= sp.sketches()[3].axes()[t].max_innermost);
    }
    blocks.insert(d.tiles.back().back());
  }
  for (std::int64_t block : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512})
    CHECK(blocks.count(block) == 1);
}

TEST_CASE("a config's neighbours are every config one mutation away", "[space][sample]") {
  // The search sweeps a best config's neighbourhood one decision at a time
  // (strategy.cpp): every mutation must be in it, each neighbour differs
  // from the config in the one decision it names, and the packed panel's k
  // block reaches every divisor of the extent from 16 in one step.
  ir::ComputeDAG dag = test::matmul_dag(1024, 1024, 1024);
  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  std::mt19937_64 rng(9);
  for (int sketch = 0; sketch < static_cast<int>(sp.sketches().size()); ++sketch) {
    SketchConfig c = sp.sample(sketch, rng);
    c.tiles.back() = {64, 16};
    const int tiles = static_cast<int>(c.tiles.size());
    auto near = sp.neighbours(c);
    std::set<std::vector<std::int64_t>> all;
    std::set<std::int64_t> blocks;
    for (const auto& [decision, n] : near) {
      REQUIRE(all.insert(sp.flatten(n)).second); // no neighbour twice
      REQUIRE(sp.flatten(n) != sp.flatten(c));
      for (int t = 0; t < tiles; ++t)
        REQUIRE((n.tiles[t] == c.tiles[t]) == (t != decision));
      for (size_t p = 0; p < c.parallel.size(); ++p) {
        const int plan = tiles + 2 * static_cast<int>(p);
        REQUIRE((n.parallel[p] == c.parallel[p]) == (plan != decision));
        REQUIRE((n.unroll[p] == c.unroll[p]) == (plan + 1 != decision));
      }
      if (decision == tiles - 1)
        blocks.insert(n.tiles.back().back());
    }
    std::set<std::int64_t> every_other; // k blocks within the sketch's bound
    for (std::int64_t b = 1; b <= sp.sketches()[sketch].axes().back().max_innermost; b *= 2)
      if (b != 16)
        every_other.insert(b);
    CHECK(blocks == every_other);
    for (int i = 0; i < 500; ++i) {
      SketchConfig m = sp.mutate(c, rng);
      if (sp.flatten(m) != sp.flatten(c))
        REQUIRE(all.count(sp.flatten(m)) == 1);
    }
  }
}

TEST_CASE("a vectorized register tile is drawn and mutated as whole vectors", "[space][sample]") {
  // matmul's j (every sketch) and conv's k (the weight-vectorized sketch)
  // are whole numbers of 16-lane vectors; conv's x (56, 3.5 vectors) and
  // the unvectorized axes keep every factorization.
  auto conv = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/conv2d_nchw.kop");
  REQUIRE(conv.ok());
  for (const ir::ComputeDAG& dag : {test::matmul_dag(512, 512, 512), *conv}) {
    SketchSpace sp(dag, SpaceParams{16, 2, 64});
    std::mt19937_64 rng(11);
    std::map<std::string, std::set<std::int64_t>> inner; // "sketch axis" -> innermost factors
    for (int i = 0; i < 400; ++i) {
      SketchConfig c = sp.sample(rng);
      for (int m = 0; m < 5; ++m, c = sp.mutate(c, rng)) {
        const Sketch& sk = sp.sketches()[c.sketch];
        for (size_t t = 0; t < c.tiles.size(); ++t) {
          const TileAxis& a = sk.axes()[t];
          if (a.reduce)
            continue;
          inner[std::to_string(c.sketch) + " " + a.axis].insert(c.tiles[t].back());
          CHECK(c.tiles[t].back() % a.innermost_multiple == 0);
        }
      }
    }
    if (dag.name() == "conv2d_nchw") {
      CHECK(inner["3 k"] == std::set<std::int64_t>{16, 32, 64});
      CHECK(inner["0 k"].count(1) == 1); // k is not vectorized there
      for (const char* s : {"0 x", "1 x", "2 x", "3 x"})
        for (std::int64_t part_vector : {1, 2, 4, 7, 8, 14, 28})
          CHECK(inner[s].count(part_vector) == 1);
    } else {
      for (const char* s : {"0 j", "1 j", "2 j", "3 j"})
        CHECK(inner[s] == std::set<std::int64_t>{16, 32, 64});
      CHECK(inner["0 i"].count(1) == 1);
    }
  }
}

TEST_CASE("a mutation exchanges factors between levels in one step", "[space][sample]") {
  // x 8 to x 14 (56 = 7 x 8): a 7 in, a 4 out. Moves alone would pass
  // through x 56 (a spilling register tile), which the search avoids.
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/conv2d_nchw.kop");
  REQUIRE(dag.ok());
  SketchSpace sp(*dag, SpaceParams{16, 2, 64});
  const Sketch& sk = sp.sketches()[3];
  REQUIRE(sk.axes()[3].axis == "x");
  std::mt19937_64 rng(4);
  SketchConfig c = sp.sample(3, rng);
  c.tiles[3] = {1, 7, 1, 8};
  std::set<std::int64_t> inner_x;
  for (int i = 0; i < 3000; ++i) {
    SketchConfig d = sp.mutate(c, rng);
    REQUIRE(d.tiles[3][0] * d.tiles[3][1] * d.tiles[3][2] * d.tiles[3][3] == 56);
    inner_x.insert(d.tiles[3].back());
  }
  CHECK(inner_x.count(14) == 1);
  CHECK(inner_x.count(28) == 1);
  CHECK(inner_x.count(8) == 1); // unchanged when another level pair mutates
}

TEST_CASE("sampling one sketch gives configs of that sketch only", "[space][sample]") {
  ir::ComputeDAG dag = test::matmul_dag(256, 256, 256);
  SketchSpace sp(dag, SpaceParams{16, 2, 64});
  std::mt19937_64 rng(9);
  for (int sketch = 0; sketch < 4; ++sketch)
    for (int i = 0; i < 50; ++i) {
      SketchConfig c = sp.sample(sketch, rng);
      REQUIRE(c.sketch == sketch);
      REQUIRE(sp.unflatten(sp.flatten(c)) == c);
      REQUIRE(sp.state(c).ok());
    }
}

TEST_CASE("a mutated point is another program, never the same one again", "[space][sample]") {
  // conv2d inlines its padding stage: that plan has no parallel or unroll
  // knob in its steps, so a mutation must not spend itself there (the tuner
  // would skip such a pick as a program already measured).
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/conv2d_nchw.kop");
  REQUIRE(dag.ok());
  SketchSpace sp(*dag, SpaceParams{16, 2, 64});
  std::mt19937_64 rng(3);
  int mutations = 0, same_program = 0;
  for (int i = 0; i < 300; ++i) {
    SketchConfig c = sp.sample(rng);
    std::string program = schedule::steps_to_json(sp.steps(c));
    for (int m = 0; m < 10; ++m) {
      SketchConfig d = sp.mutate(c, rng);
      if (sp.flatten(d) == sp.flatten(c))
        continue; // no change (a tile move that did not fit)
      ++mutations;
      same_program += schedule::steps_to_json(sp.steps(d)) == program;
    }
  }
  CHECK(mutations > 2000);
  CHECK(same_program == 0);
}

TEST_CASE("a config's state from its sketch's structure equals a full replay", "[space][sketch]") {
  // SketchSpace::state copies a state of the sketch's inlining and cache
  // writes made once; the schedule must be the one a replay from the DAG
  // gives (conv2d: an inlined padding; matmul: cache writes and packing).
  for (const char* op : {"conv2d_nchw", "matmul"}) {
    auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + op + ".kop");
    REQUIRE(dag.ok());
    SketchSpace sp(*dag, SpaceParams{16, 2, 64});
    std::mt19937_64 rng(11);
    for (int i = 0; i < 40; ++i) {
      SketchConfig c = sp.sample(rng);
      auto fast = sp.state(c);
      auto full = schedule::State::replay(*dag, sp.steps(c));
      REQUIRE(fast.ok() == full.ok());
      if (!full.ok())
        continue;
      CHECK(schedule::steps_to_json(fast->steps()) == schedule::steps_to_json(full->steps()));
      CHECK(schedule::to_string(schedule::lower(*fast)) ==
            schedule::to_string(schedule::lower(*full)));
    }
  }
}

TEST_CASE("sampling is fast", "[space][sample][!benchmark]") {
  SketchSpace sp(test::matmul_dag(512, 512, 512), SpaceParams{16, 2, 64});
  std::mt19937_64 rng(1);
  auto start = std::chrono::steady_clock::now();
  std::size_t steps = 0;
  for (int i = 0; i < 10000; ++i)
    steps += sp.steps(sp.sample(rng)).size();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("10000 sampled matmul configs with their steps in " << s << " s");
  REQUIRE(steps > 0);
}

TEST_CASE("row operations get a sketch with every row stage computed at the output's row loop",
          "[space][sketch][rows]") {
  // Softmax and layer norm: the twin of the all-rfactored sketch, one
  // parallel loop over the rows with each row's reductions and values
  // inside it. Row sums (the output a reduction), a matmul (no row-wise
  // reads) and max pooling get none.
  for (const char* op : {"softmax", "layer_norm"}) {
    INFO(op);
    SketchSpace sp = op_space(op);
    const Sketch& fused = sp.sketches().back();
    REQUIRE_THAT(fused.name(), Catch::EndsWith("rows fused at Y"));
    const auto* rows = std::get_if<RowsPlan>(&fused.plans().back());
    REQUIRE(rows);
    std::vector<std::string> members;
    for (const RowsPlan::Member& m : rows->members)
      members.push_back(m.stage + (m.rfactor_axis.empty() ? "" : " rf"));
    CHECK(members == (std::string(op) == "softmax"
                          ? std::vector<std::string>{"row_max rf", "exps", "row_sum rf"}
                          : std::vector<std::string>{"row_sum rf", "row_var rf"}));
    const int sketch = static_cast<int>(sp.sketches().size()) - 1;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 50; ++i) {
      SketchConfig c = sp.sample(sketch, rng);
      auto state = sp.state(c);
      REQUIRE(state.ok());
      schedule::LoweredFunc func = schedule::lower(*state);
      INFO(schedule::to_string(func));
      CHECK(test::count_loops(func, schedule::ForKind::Parallel) <= 1);
      for (const auto& st : state->stages())
        if (st.name != "Y" && st.location != schedule::Location::Inline &&
            !state->dag().stage(state->dag().find_stage(st.name)).is_placeholder())
          CHECK(st.at_stage == "Y");
    }
  }
  for (const char* op : {"row_sum", "matmul", "max_pool2d"}) {
    INFO(op);
    SketchSpace other = op_space(op);
    for (const Sketch& sk : other.sketches())
      CHECK_THAT(sk.name(), !Catch::Contains("rows fused"));
  }
}
