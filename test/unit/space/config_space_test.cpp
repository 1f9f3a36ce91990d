// Knobs and config spaces (AutoTVM): index ↔ config, enumeration order,
// seeded sampling, mutation and crossover stay in the space.
#include "kiln/space/config_space.h"

#include <catch2/catch.hpp>

#include <numeric>
#include <set>

using namespace kiln::space;

namespace {
/// 12 = 2^2·3 in two lengths (6 ways), 3 orders, 2 annotations, 3 values.
ConfigSpace small_space() {
  ConfigSpace sp;
  sp.define_split("tile", 12, 2);
  sp.define_reorder("order", {{"a", "b"}, {"b", "a"}, {"a", "b"}});
  sp.define_annotate("ann", {"none", "unroll"});
  sp.define_knob("step", {0, 16, 64});
  return sp;
}
} // namespace

TEST_CASE("a config space is the product of its knobs", "[space][config]") {
  ConfigSpace sp = small_space();
  REQUIRE(sp.knobs().size() == 4);
  REQUIRE(sp.knobs()[0].size() == 6);
  REQUIRE(sp.size() == 6u * 3 * 2 * 3);
  REQUIRE(sp.find("ann") == 2);
  REQUIRE(sp.find("nope") == -1);
  for (const auto& lengths : sp.knobs()[0].splits)
    REQUIRE(std::accumulate(lengths.begin(), lengths.end(), std::int64_t{1}, std::multiplies<>()) ==
            12);
  ConfigSpace limited;
  limited.define_split("tile", 12, 3, 2); // innermost at most 2
  for (const auto& lengths : limited.knobs()[0].splits)
    REQUIRE(lengths.back() <= 2);
}

TEST_CASE("every index maps to a config and back, first knob fastest", "[space][config]") {
  ConfigSpace sp = small_space();
  std::set<KnobConfig> seen;
  for (std::uint64_t i = 0; i < *sp.size(); ++i) {
    KnobConfig c = sp.at(i);
    REQUIRE(sp.valid(c));
    REQUIRE(sp.index_of(c) == i);
    seen.insert(c);
  }
  REQUIRE(seen.size() == *sp.size()); // no duplicates: the whole space
  REQUIRE(sp.at(0) == KnobConfig{0, 0, 0, 0});
  REQUIRE(sp.at(1) == KnobConfig{1, 0, 0, 0});
  REQUIRE(sp.at(6) == KnobConfig{0, 1, 0, 0});
  REQUIRE(sp.at(6 * 3) == KnobConfig{0, 0, 1, 0});
  REQUIRE(sp.at(*sp.size() - 1) == KnobConfig{5, 2, 1, 2});
}

TEST_CASE("configs out of range are not valid", "[space][config]") {
  ConfigSpace sp = small_space();
  REQUIRE_FALSE(sp.valid({0, 0, 0}));
  REQUIRE_FALSE(sp.valid({6, 0, 0, 0}));
  REQUIRE_FALSE(sp.valid({0, -1, 0, 0}));
  REQUIRE(sp.valid({5, 2, 1, 2}));
}

TEST_CASE("sampling is seeded, uniform and in the space", "[space][config]") {
  ConfigSpace sp = small_space();
  std::mt19937_64 a(7), b(7);
  std::vector<std::uint64_t> hits(*sp.size());
  for (int i = 0; i < 10000; ++i) {
    KnobConfig x = sp.sample(a);
    REQUIRE(x == sp.sample(b));
    REQUIRE(sp.valid(x));
    ++hits[sp.index_of(x)];
  }
  // 108 configs, ~93 hits each: every one is drawn.
  for (std::uint64_t h : hits)
    REQUIRE(h > 40);
}

TEST_CASE("mutation changes one knob, crossover mixes at one cut", "[space][config]") {
  ConfigSpace sp = small_space();
  std::mt19937_64 rng(3);
  for (int i = 0; i < 200; ++i) {
    KnobConfig x = sp.sample(rng), y = sp.sample(rng);
    KnobConfig m = sp.mutate(x, rng);
    REQUIRE(sp.valid(m));
    int changed = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
      changed += m[k] != x[k];
    REQUIRE(changed == 1);
    KnobConfig c = sp.crossover(x, y, rng);
    REQUIRE(sp.valid(c));
    REQUIRE(c[0] == x[0]); // the cut is after at least one knob
    std::size_t cut = 1;
    while (cut < c.size() && c[cut] == x[cut])
      ++cut;
    for (std::size_t k = cut; k < c.size(); ++k)
      REQUIRE(c[k] == y[k]);
  }
  // A knob with one choice is never the one mutated.
  ConfigSpace one;
  one.define_knob("fixed", {4});
  one.define_knob("free", {0, 1});
  REQUIRE(one.mutate({0, 0}, rng) == KnobConfig{0, 1});
}

TEST_CASE("a config's neighbours are every other choice of each knob", "[space][config]") {
  ConfigSpace sp = small_space();
  std::mt19937_64 rng(4);
  KnobConfig x = sp.sample(rng);
  auto near = sp.neighbours(x);
  std::size_t expected = 0;
  for (std::size_t k = 0; k < sp.knobs().size(); ++k)
    expected += sp.knobs()[k].size() - 1;
  REQUIRE(near.size() == expected);
  std::set<KnobConfig> all;
  for (const auto& [knob, n] : near) {
    REQUIRE(sp.valid(n));
    REQUIRE(all.insert(n).second);
    for (std::size_t k = 0; k < x.size(); ++k)
      REQUIRE((n[k] == x[k]) == (static_cast<int>(k) != knob));
  }
  for (int i = 0; i < 100; ++i)
    REQUIRE(all.count(sp.mutate(x, rng)) == 1);
  REQUIRE(sp.neighbours({99, 99, 99}).empty()); // not in the space
}

TEST_CASE("a view reads the chosen values by knob name", "[space][config]") {
  ConfigSpace sp = small_space();
  KnobConfig c = sp.at(sp.index_of({1, 1, 1, 2}));
  ConfigView v(sp, c);
  REQUIRE(v.split("tile") == sp.knobs()[0].splits[1]);
  REQUIRE(v.order("order") == std::vector<std::string>{"b", "a"});
  REQUIRE(v.annotation("ann") == "unroll");
  REQUIRE(v.value("step") == 64);
  REQUIRE(sp.describe(c) == "tile=[2, 6] order=[b, a] ann=unroll step=64");
}
