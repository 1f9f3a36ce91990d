#include "../ir/test_dags.h"

#include "kiln/record/record.h"
#include "kiln/record/tuning_curve.h"

#include <catch2/catch.hpp>

using namespace kiln;
using namespace kiln::record;

namespace {

/// A record of `run` whose kernel takes `seconds`; below 1e-5 s it is a
/// wrong answer (still timed, as the runner records them).
Record trial_record(const ir::ComputeDAG& dag, const std::string& run, std::int64_t trial,
                    double seconds, double timestamp) {
  Record r;
  r.run = run;
  r.task = TaskInfo::from_dag(dag, "ops/matmul.kop");
  r.trial = trial;
  r.config.steps = {schedule::SplitStep{"C", "i", {trial + 1}}}; // one config per trial
  r.timestamp = timestamp;
  r.result.costs = {seconds};
  if (seconds < 1e-5)
    r.result.error = MeasureError::WrongAnswer;
  r.result.build_seconds = 0.5;
  r.result.run_seconds = 0.5;
  return r;
}

} // namespace

TEST_CASE("the tuning curve takes the best valid record so far and the round's time",
          "[record][curve]") {
  ir::ComputeDAG dag = test::matmul_dag(64, 64, 64); // 2 * 64^3 flops
  double flops = dag.flop_count();
  LoadedLog log;
  // Trial 2 is a wrong answer faster than anything: it must never count.
  double times[] = {4e-3, 2e-3, 1e-6, 3e-3, 1e-3, 5e-3};
  for (int i = 0; i < 6; ++i)
    log.records.push_back(trial_record(dag, "online", i, times[i], 100 + i));
  RoundRecord r1;
  r1.run = "online";
  r1.workload_key = dag.workload_key();
  r1.trials = 3;
  r1.elapsed_seconds = 7;
  RoundRecord r2 = r1;
  r2.trials = 6;
  r2.elapsed_seconds = 12;
  log.rounds = {r1, r2};

  auto curves = tuning_curves(log, {2, 4, 100});
  REQUIRE(curves.size() == 1);
  const TuningCurve& c = curves[0];
  REQUIRE(c.trials == 6);
  REQUIRE(c.seconds == 12);
  REQUIRE(c.best_gflops == Approx(flops / 1e-3 / 1e9));
  REQUIRE(c.points[0].best_gflops == Approx(flops / 2e-3 / 1e9));
  REQUIRE(c.points[0].seconds == 7); // the first round reached 2 trials
  REQUIRE(c.points[1].best_gflops == Approx(flops / 2e-3 / 1e9));
  REQUIRE(c.points[1].seconds == 12);
  REQUIRE(c.points[2].reached == 6); // asked for 100, the run made 6
}

TEST_CASE("without round lines the curve's seconds come from timestamps", "[record][curve]") {
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  LoadedLog log;
  for (int i = 0; i < 4; ++i)
    log.records.push_back(trial_record(dag, "a", i, 1e-3, 10.0 + 2 * i));
  log.records.push_back(trial_record(dag, "b", 0, 1e-3, 50));
  auto curves = tuning_curves(log, {3});
  REQUIRE(curves.size() == 2); // one per run
  // The third record came 4 s after the first, which itself took 1 s.
  REQUIRE(curves[0].points[0].seconds == Approx(5));
  REQUIRE(curves[1].run == "b");
  REQUIRE(curves[1].points[0].reached == 1);
}

TEST_CASE("timings of a config again count in its judgement, not as trials", "[record][curve]") {
  // Four trials, then the tuner's confirmation: trial 1 (logged at 1 ms, a
  // lucky timing) and trial 3 (2 ms) timed twice more each, in turn.
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);
  double flops = dag.flop_count();
  LoadedLog log;
  double times[] = {4e-3, 1e-3, 3e-3, 2e-3};
  for (int i = 0; i < 4; ++i)
    log.records.push_back(trial_record(dag, "a", i, times[i], 10.0 + i));
  std::int64_t next = 4;
  for (int repeat = 0; repeat < 2; ++repeat)
    for (auto [trial, seconds] : {std::pair{1, 5e-3}, std::pair{3, 2.1e-3}}) {
      Record again = trial_record(dag, "a", next, seconds, 20.0 + static_cast<double>(next));
      ++next;
      again.config = log.records[static_cast<size_t>(trial)].config;
      log.records.push_back(again);
    }
  auto curves = tuning_curves(log, {2, 4});
  REQUIRE(curves.size() == 1);
  const TuningCurve& c = curves[0];
  CHECK(c.trials == 4);
  CHECK(c.repeats == 4);
  CHECK(c.points[1].best_gflops == Approx(flops / 1e-3 / 1e9)); // the curve: first timings
  // The end: trial 1's median is 5 ms, trial 3's 2.1 ms.
  CHECK(c.best_gflops == Approx(flops / 2.1e-3 / 1e9));
}
