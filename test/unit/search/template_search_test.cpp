// The tuner over a template's knob space, with a simulated measurer: grid
// search walks the space in order without repeats, every strategy runs on
// it, configs carry the template's knobs and steps, and resume finds logged
// configs' points again.
#include "../ir/test_dags.h"
#include "recording_space.h"

#include "kiln/model/xgboost_model.h"
#include "kiln/search/search_space.h"
#include "kiln/search/strategy.h"
#include "kiln/search/tuner.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <set>

using namespace kiln;
using namespace kiln::search;

namespace {

using RecordingSpace = test::RecordingSpace<TemplateSearchSpace>;

/// Seconds of a template config under a made-up machine: best with
/// register tile rows of 4 and columns of 16, the cache and parallel loops.
class KnobMeasurer : public measure::Measurer {
public:
  explicit KnobMeasurer(const RecordingSpace& space) : space_(space) {}
  using Measurer::measure;
  std::vector<record::MeasureResult>
  measure(std::span<const schedule::State* const> states) override {
    std::vector<record::MeasureResult> out;
    for (const schedule::State* s : states) {
      record::MeasureResult r;
      ++stats_.trials;
      ++stats_.by_error[0];
      const Point* p = space_.point_built(*s);
      r.costs = {p ? seconds(*s, *p) : 0.02}; // the naive schedule: slow
      r.number = 1;
      out.push_back(r);
    }
    return out;
  }
  const measure::MeasureStats& stats() const override { return stats_; }
  std::set<schedule::ProgramKey> seen; ///< every measured program but the naive one

private:
  double seconds(const schedule::State& s, const Point& p) {
    seen.insert(s.key());
    const auto& knobs = space_.templ().space().knobs();
    double cost = 1.0;
    for (std::size_t i = 0; i < knobs.size(); ++i) {
      const std::string& knob = knobs[i].name;
      const auto choice = static_cast<double>(p[i]);
      if (knob == "tile_y" || knob == "tile_x")
        cost += 0.1 * std::abs(choice - 3);
      if (knob == "cache_write" || knob == "parallel")
        cost += choice == 0 ? 0.5 : 0.0;
    }
    return cost * 1e-3;
  }
  const RecordingSpace& space_;
  measure::MeasureStats stats_;
};

struct Fixture {
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64);
  RecordingSpace space{
      std::move(*space::make_template("matmul", dag, space::SpaceParams{16, 2, 64}))};
  KnobMeasurer measurer{space};
  TaskSetup task{"test", Target{"x86_64-pc-linux-gnu", "test", "", 512, 2}, nullptr};

  TuneResult tune(const std::string& strategy, model::CostModel& model, int trials) {
    TuneOptions o;
    o.strategy = strategy;
    o.trials = trials;
    o.batch = 8;
    o.strategy_options.population = 64;
    o.strategy_options.generations = 2;
    o.strategy_options.sa_chains = 8;
    o.strategy_options.sa_steps = 20;
    o.confirm_top = 0; // every record a trial, in the strategy's order (tuner_test covers it)
    Tuner t(task, space, measurer, model, o);
    auto r = t.run();
    REQUIRE(r.ok());
    return *r;
  }
};

} // namespace

TEST_CASE("grid search walks a template space in order, without repeats", "[search][template]") {
  Fixture f;
  model::RandomModel none(1);
  TuneResult r = f.tune("grid", none, 41);
  REQUIRE(r.trials == 41);
  REQUIRE(f.measurer.seen.size() == 40); // every trial but the naive one, all distinct
  for (std::size_t i = 1; i < r.records.size(); ++i) {
    const record::Config& c = r.records[i].config;
    REQUIRE(c.template_name == "matmul");
    REQUIRE(c.point == f.space.at(i - 1)); // AutoTVM's order: index 0, 1, 2, …
    REQUIRE_FALSE(c.steps.empty());
  }
}

TEST_CASE("grid search stops when the template space is exhausted", "[search][template]") {
  ir::ComputeDAG dag = test::matmul_dag(2, 2, 2);
  RecordingSpace space{
      std::move(*space::make_template("matmul", dag, space::SpaceParams{16, 2, 64}))};
  KnobMeasurer measurer{space};
  TaskSetup task{"test", Target{"x86_64-pc-linux-gnu", "test", "", 512, 2}, nullptr};
  TuneOptions o;
  o.strategy = "grid";
  o.trials = 100000;
  model::RandomModel none(1);
  Tuner t(task, space, measurer, none, o);
  auto r = t.run();
  REQUIRE(r.ok());
  REQUIRE(measurer.seen.size() == *space.size());
  REQUIRE(r->stop_reason == "no unmeasured config left in the space");
}

TEST_CASE("every strategy tunes over a template space", "[search][template]") {
  for (const char* name : {"random", "evolutionary", "annealing", "genetic"}) {
    DYNAMIC_SECTION(name) {
      Fixture f;
      model::XGBoostModel model;
      TuneResult r = f.tune(name, model, 40);
      REQUIRE(r.trials == 40);
      REQUIRE(r.errors == 0);
      REQUIRE(f.measurer.seen.size() == 39); // no config measured twice
      REQUIRE(r.best);
      REQUIRE(r.best->config.template_name == "matmul");
    }
  }
}

TEST_CASE("a template config maps back to its point", "[search][template]") {
  Fixture f;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 50; ++i) {
    Point p = f.space.sample(rng);
    record::Config c = f.space.config(p);
    REQUIRE(c.knobs.size() == p.size());
    REQUIRE(f.space.point_of(c) == p);
    REQUIRE(f.space.state(p).ok());
    REQUIRE(f.space.state(p)->steps() == c.steps);
    Point m = f.space.mutate(p, rng);
    REQUIRE(f.space.state(m).ok());
    REQUIRE(f.space.state(f.space.crossover(p, m, rng)).ok());
  }
  record::Config other = f.space.config(f.space.at(0));
  other.template_name = "conv2d_nchw";
  REQUIRE_FALSE(f.space.point_of(other));
  record::Config changed = f.space.config(f.space.at(0));
  changed.steps.pop_back(); // logged by a template that made other steps
  REQUIRE_FALSE(f.space.point_of(changed));
  REQUIRE(f.space.state({99}).error().id() == "invalid-step");
}

TEST_CASE("resume over a template space measures nothing twice", "[search][template]") {
  Fixture f;
  model::XGBoostModel m1;
  TuneResult first = f.tune("random", m1, 24);
  TuneOptions o;
  o.strategy = "random";
  o.trials = 24;
  o.batch = 8;
  o.seed = 1; // the same seed proposes the same points first
  model::XGBoostModel m2;
  Tuner t(f.task, f.space, f.measurer, m2, o);
  t.resume(first.records);
  auto second = t.run();
  REQUIRE(second.ok());
  REQUIRE(f.measurer.seen.size() == 23 + 24);
}
