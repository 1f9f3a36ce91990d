#include "kiln/model/metrics.h"

#include <catch2/catch.hpp>

using namespace kiln::model;

TEST_CASE("pairwise accuracy counts pairs within a task", "[model][metrics]") {
  // Task a: scores order 3 of the 3 pairs right. Task b: 1 pair right, 1
  // wrong, 1 tied label (left out). Across tasks nothing is compared.
  std::vector<Scored> s = {
      {"a", 0.1, 1},   {"a", 0.2, 2},   {"a", 0.3, 3},
      {"b", 5.0, 0.5}, {"b", 1.0, 0.9}, {"b", 3.0, 0.9},
  };
  // b pairs: (5.0,.5)-(1.0,.9) wrong, (5.0,.5)-(3.0,.9) wrong, (1.0,.9)-(3.0,.9) tie: out.
  REQUIRE(pairwise_accuracy(s) == Approx(3.0 / 5.0));

  // Reversed scores: all wrong. Equal scores: half right.
  REQUIRE(pairwise_accuracy({{"t", 3, 1}, {"t", 2, 2}, {"t", 1, 3}}) == Approx(0.0));
  REQUIRE(pairwise_accuracy({{"t", 1, 1}, {"t", 1, 2}}) == Approx(0.5));
  // No pair to judge.
  REQUIRE(pairwise_accuracy({}) == Approx(0.5));
  REQUIRE(pairwise_accuracy({{"t", 1, 1}, {"u", 2, 2}}) == Approx(0.5));
}

TEST_CASE("top-k takes the best true label among the k top scores", "[model][metrics]") {
  std::vector<Scored> s = {
      // Task a: best label 1.0 is ranked 3rd.
      {"a", 0.9, 0.5},
      {"a", 0.8, 0.7},
      {"a", 0.7, 1.0},
      {"a", 0.1, 0.2},
      // Task b: best is ranked first.
      {"b", 2.0, 0.8},
      {"b", 1.0, 0.4},
      // Task c: every program failed, left out.
      {"c", 1.0, 0.0},
  };
  auto top1 = top_k_score(s, 1);
  REQUIRE(top1.per_task.size() == 2);
  REQUIRE(top1.per_task[0].first == "a");
  REQUIRE(top1.per_task[0].second == Approx(0.5));
  REQUIRE(top1.per_task[1].second == Approx(1.0));
  REQUIRE(top1.mean == Approx(0.75));
  auto top2 = top_k_score(s, 2);
  REQUIRE(top2.per_task[0].second == Approx(0.7));
  REQUIRE(top2.mean == Approx(0.85));
  REQUIRE(top_k_score(s, 3).mean == Approx(1.0));
  REQUIRE(top_k_score(s, 100).mean == Approx(1.0));
  REQUIRE(top_k_score(s, 0).mean == Approx(0.0));
  REQUIRE(top_k_score({}, 5).per_task.empty());
  // Score ties keep input order: the first listed wins.
  REQUIRE(top_k_score({{"t", 1, 0.5}, {"t", 1, 1.0}}, 1).mean == Approx(0.5));
}

TEST_CASE("pairwise accuracy can skip near-ties and average per task", "[model][metrics]") {
  // Task a: labels 1.0 and 0.98 differ by 2% (wrongly ordered), 1.0 and 0.5
  // by 50% (right), 0.98 and 0.5 (right). Task b: one pair, wrong.
  std::vector<Scored> s = {
      {"a", 1.0, 0.98}, {"a", 0.9, 1.0}, {"a", 0.1, 0.5}, {"b", 1.0, 0.2}, {"b", 2.0, 0.1},
  };
  REQUIRE(pairwise_accuracy(s) == Approx(2.0 / 4.0));
  // With a 5% gap the near-tie is left out: 2 right of 3.
  REQUIRE(pairwise_accuracy(s, 0.05) == Approx(2.0 / 3.0));
  // A gap of exactly the difference leaves the pair out too.
  REQUIRE(pairwise_accuracy({{"t", 1, 1.0}, {"t", 2, 0.5}}, 0.5) == Approx(0.5));

  auto per = pairwise_accuracy_per_task(s);
  REQUIRE(per.per_task.size() == 2);
  REQUIRE(per.per_task[0].second == Approx(2.0 / 3.0));
  REQUIRE(per.per_task[1].second == Approx(0.0));
  REQUIRE(per.mean == Approx(1.0 / 3.0));
  REQUIRE(pairwise_accuracy_per_task(s, 0.05).per_task[0].second == Approx(1.0));
  REQUIRE(pairwise_accuracy_per_task({}).mean == Approx(0.5));
}
