// The report from known logs: its structure, its numbers, and that it renders
// for the logs a user can have (empty, one record, only errors, 100,000
// records).
#include "../ir/test_dags.h"

#include "kiln/record/tuning_log.h"
#include "kiln/report/report.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

using namespace kiln;
using namespace kiln::record;

namespace {

/// A task of 1 GFLOP per call, so GFLOPS = 1 / seconds.
TaskInfo task_info(std::int64_t n = 64) {
  TaskInfo t = TaskInfo::from_dag(test::matmul_dag(n, n, n), "ops/matmul.kop");
  t.flops = 1e9;
  return t;
}

Record make_record(const TaskInfo& task, const std::string& run, std::int64_t trial, double seconds,
                   std::vector<std::int64_t> point = {}, double predicted = std::nan("")) {
  Record r;
  r.run = run;
  r.task = task;
  r.target.triple = "x86_64-pc-linux-gnu";
  r.target.cpu = "znver4";
  r.target.features = "+avx2,+fma,-sse4a";
  r.target.vector_bits = 512;
  r.target.cores = 2;
  if (!point.empty())
    r.config.steps = {schedule::SplitStep{"C", "i", {point[1]}},
                      schedule::AnnotateStep{"C", "j", schedule::Annotation::Vectorize}};
  r.config.point = std::move(point);
  r.result.costs = {seconds};
  r.result.number = 1;
  r.result.build_seconds = 0.05;
  r.result.run_seconds = 0.01;
  r.trial = trial;
  r.timestamp = 1764690000.0 + static_cast<double>(trial);
  r.kiln_version = "0.1.0";
  r.predicted = predicted;
  return r;
}

Record failed(const TaskInfo& task, const std::string& run, std::int64_t trial, MeasureError e,
              const std::string& message) {
  Record r = make_record(task, run, trial, 0, {0, 2 << (trial % 3), 4, 1, 0});
  r.result.costs.clear();
  r.result.error = e;
  r.result.message = message;
  return r;
}

RoundRecord round(const std::string& run, const std::string& key, int i, double accuracy) {
  RoundRecord r;
  r.run = run;
  r.workload_key = key;
  r.round = i;
  r.sampled = 4;
  r.predicted = 2048;
  r.measured = 4;
  r.errors = i == 1 ? 1 : 0;
  r.model_accuracy = accuracy;
  r.best_gflops = 100.0 + 10 * i;
  r.sample_seconds = 0.5;
  r.measure_seconds = 1.5;
  r.update_seconds = 0.25;
  r.elapsed_seconds = 2.25 * (i + 1);
  r.trials = 4 * (i + 1);
  return r;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// The text of the <svg> element with this id.
std::string chart(const std::string& html, const std::string& id) {
  std::size_t at = html.find("<svg id=\"" + id + "\"");
  REQUIRE(at != std::string::npos);
  return html.substr(at, html.find("</svg>", at) - at);
}

/// The text of a <section>.
std::string section(const std::string& html, const std::string& id) {
  std::size_t at = html.find("<section id=\"" + id + "\"");
  REQUIRE(at != std::string::npos);
  return html.substr(at, html.find("</section>", at) - at);
}

const char* const kSections[] = {"tuning-curve", "pipeline", "cost-model",
                                 "search-space", "modes",    "errors",
                                 "best-configs", "machine",  "command"};

void require_page(const std::string& html) {
  REQUIRE(html.rfind("<!DOCTYPE html>", 0) == 0);
  REQUIRE(html.find("</html>") != std::string::npos);
  for (const char* id : kSections)
    REQUIRE(html.find(std::string("<section id=\"") + id + "\"") != std::string::npos);
  // Self-contained: no script, and no URL but the SVG namespace.
  REQUIRE(html.find("<script") == std::string::npos);
  REQUIRE(count(html, "http") == count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  REQUIRE(count(html, "<svg") == count(html, "</svg>"));
  REQUIRE(count(html, "<section") == count(html, "</section>"));
}

/// An online run of 8 trials (the naive one first), an offline pick, a
/// hybrid run of 3, a library baseline, and round lines.
LoadedLog known_log() {
  TaskInfo t = task_info();
  LoadedLog log;
  const std::string online = "online/evolutionary/seed=1";
  log.records.push_back(make_record(t, online, 0, 0.1)); // naive: 10 GFLOPS
  // Scores against speed: ranks (1,2,3,4,5) against (2,1,3,4,5), so ρ = 0.9.
  log.records.push_back(make_record(t, online, 1, 1 / 50.0, {0, 2, 8, 1, 16}, 0.1));
  log.records.push_back(make_record(t, online, 2, 1 / 40.0, {0, 4, 8, 1, 64}, 0.2));
  log.records.push_back(make_record(t, online, 3, 1 / 80.0, {0, 8, 16, 1, 64}, 0.3));
  log.records.push_back(failed(t, online, 4, MeasureError::WrongAnswer, "C[0, 1]: got 1, want 2"));
  log.records.push_back(make_record(t, online, 5, 1 / 100.0, {0, 16, 16, 1, 512}, 0.4));
  log.records.push_back(make_record(t, online, 6, 1 / 125.0, {0, 16, 32, 1, 512}, 0.5));
  log.records.push_back(failed(t, online, 7, MeasureError::Timeout, "ran past 10 s"));
  log.records.push_back(
      make_record(t, "offline/evolutionary/seed=1", 0, 1 / 90.0, {0, 8, 32, 1, 0}));
  for (int i = 0; i < 3; ++i)
    log.records.push_back(
        make_record(t, "hybrid/evolutionary/seed=1", i, 1 / (60.0 + 5 * i), {0, 4, 4 << i, 1, 16}));
  log.records.push_back(make_record(t, "baseline/OpenBLAS sgemm", 0, 1 / 110.0));
  for (int i = 0; i < 2; ++i)
    log.rounds.push_back(round(online, t.workload_key, i, i == 0 ? 0.5 : 0.75));
  log.rounds.push_back(round("hybrid/evolutionary/seed=1", t.workload_key, 0, 0.6));
  log.lines = static_cast<std::int64_t>(log.records.size() + log.rounds.size());
  return log;
}

} // namespace

TEST_CASE("the report of a known log has every section and its numbers", "[report]") {
  LoadedLog log = known_log();
  report::ReportOptions options;
  options.command = "kiln tune ops/matmul.kop --trials 8 --log <tmp>/log.jsonl";
  options.baselines.push_back({"oneDNN", 105, ""});
  std::string html = report::render_report(log, options);
  require_page(html);

  // The best config: 125 GFLOPS, 12.5x the naive schedule's 10.
  REQUIRE(html.find("<div class=\"v\">125</div>") != std::string::npos);
  REQUIRE(html.find("12.5×") != std::string::npos);

  // Tuning curve: one line per run label, the baselines from the log and the
  // options as dashed lines on both charts.
  std::string trials = chart(html, "curve-trials-0");
  REQUIRE(count(trials, "class=\"ln\"") == 3);
  REQUIRE(trials.find("OpenBLAS sgemm") != std::string::npos);
  REQUIRE(trials.find("oneDNN") != std::string::npos);
  REQUIRE(count(trials, "stroke-dasharray=\"6 4\"") == 2);
  REQUIRE(chart(html, "curve-time-0").find("OpenBLAS sgemm") != std::string::npos);
  // Axes carry their units.
  REQUIRE(trials.find("best GFLOPS") != std::string::npos);
  REQUIRE(chart(html, "curve-time-0").find("wall time since the run started (s)") !=
          std::string::npos);

  // Pipeline: the online run's rounds, with accuracy and stage times.
  std::string pipeline = section(html, "pipeline");
  REQUIRE(pipeline.find("0.50 → 0.75") != std::string::npos);
  REQUIRE(chart(html, "pipeline-0-0-stages").find("measure") != std::string::npos);
  REQUIRE(chart(html, "pipeline-0-0-accuracy").find("chance") != std::string::npos);

  // Cost model: one circle per timed record with a score, and ρ.
  std::string scatter = chart(html, "model-scatter");
  REQUIRE(count(scatter, "class=\"pt\"") == 5);
  REQUIRE(count(scatter, "class=\"px\"") == 0); // the failed ones carry no score
  REQUIRE(section(html, "cost-model").find("ρ = 0.90") != std::string::npos);

  // Search space: every config with a point, placed by two decisions, the
  // best starred.
  std::string space = chart(html, "space-0");
  REQUIRE(count(space, "class=\"pt\"") == 9);
  REQUIRE(count(space, "class=\"px\"") == 2);
  REQUIRE(count(space, "class=\"best\"") == 1);
  REQUIRE(space.find("best: 125 GFLOPS") != std::string::npos);

  // Modes side by side.
  std::string modes = section(html, "modes");
  for (const char* mode : {"online", "offline", "hybrid"})
    REQUIRE(modes.find(std::string("<td>") + mode + "</td>") != std::string::npos);
  REQUIRE(count(chart(html, "modes-0-gflops"), "<rect x=") >= 3);

  // Errors by kind.
  std::string errors = section(html, "errors");
  REQUIRE(errors.find("2 of 12 trials failed") != std::string::npos);
  REQUIRE(errors.find("C[0, 1]: got 1, want 2") != std::string::npos);

  // The best configs, fastest first, with a schedule file and a loop nest.
  std::string best = section(html, "best-configs");
  REQUIRE(best.find("The 10 best configs") != std::string::npos);
  REQUIRE(best.find("#1 · 125 GFLOPS") != std::string::npos);
  REQUIRE(best.find("Loop nest:") != std::string::npos);
  REQUIRE(best.find("&quot;split&quot;") != std::string::npos);

  // Machine and command, escaped.
  REQUIRE(section(html, "machine").find("znver4") != std::string::npos);
  REQUIRE(section(html, "command").find("--log &lt;tmp&gt;/log.jsonl") != std::string::npos);
}

TEST_CASE("the network view weighs each task's best into the network estimate", "[report]") {
  TaskInfo a = task_info(64), b = task_info(32);
  LoadedLog log;
  const std::string gradient = "network/gradient/evolutionary/seed=1";
  const std::string rr = "network/round-robin/evolutionary/seed=1";
  for (const std::string& run : {gradient, rr}) {
    NetworkRecord n;
    n.run = run;
    n.model = "m.onnx";
    n.scheduler = run == gradient ? "gradient" : "round-robin";
    n.tasks = {{a.workload_key, "matmul", 2, 1e9}, {b.workload_key, "matmul", 1, 1e9}};
    log.networks.push_back(n);
  }
  // Gradient: naive A (0.1 s, twice a run) and B (0.05 s), then A at 0.01 s
  // and B at 0.005 s: 250 ms, 70 ms, 25 ms. Round-robin ends at 90 ms.
  log.records.push_back(make_record(a, gradient, 0, 0.1));
  log.records.push_back(make_record(b, gradient, 0, 0.05));
  log.records.push_back(make_record(a, gradient, 1, 0.01, {0, 4, 8, 1, 16}));
  log.records.push_back(make_record(a, gradient, 2, 0.02, {0, 8, 8, 1, 16}));
  log.records.push_back(make_record(b, gradient, 1, 0.005, {0, 2, 8, 1, 16}));
  log.records.push_back(make_record(a, rr, 0, 0.1));
  log.records.push_back(make_record(b, rr, 0, 0.05));
  log.records.push_back(make_record(a, rr, 1, 0.02, {0, 4, 8, 1, 16}));
  std::string html = report::render_report(log);
  require_page(html);
  std::string net = section(html, "network");
  REQUIRE(net.find("<td>m.onnx</td>") != std::string::npos);
  REQUIRE(net.find(">25<") != std::string::npos);
  REQUIRE(net.find(">90<") != std::string::npos);
  // A is 2 × 10 ms of the gradient run's 25 ms, 10× faster than naive.
  REQUIRE(net.find("80.0%") != std::string::npos);
  REQUIRE(net.find("10×") != std::string::npos);
  std::string curve = chart(html, "network-trials");
  REQUIRE(count(curve, "class=\"ln\"") == 2);
  REQUIRE(curve.find(gradient) != std::string::npos);
  REQUIRE(curve.find(rr) != std::string::npos);
  REQUIRE(count(chart(html, "network-trials-per-task"), "<rect x=") >= 4);
  REQUIRE(count(chart(html, "network-share"), "<rect x=") >= 4);
  // A log without network lines has no network section.
  log.networks.clear();
  REQUIRE(report::render_report(log).find("<section id=\"network\"") == std::string::npos);
}

TEST_CASE("the report renders an empty log", "[report]") {
  std::string html = report::render_report(LoadedLog{});
  require_page(html);
  REQUIRE(html.find("no trials") != std::string::npos);
  REQUIRE(html.find("<svg") == std::string::npos);
}

TEST_CASE("the report renders a log of one record", "[report]") {
  LoadedLog log;
  Record r = make_record(task_info(), "", 0, 1 / 42.0);
  log.records.push_back(r);
  std::string html = report::render_report(log);
  require_page(html);
  REQUIRE(html.find("<div class=\"v\">42</div>") != std::string::npos);
  REQUIRE(html.find("(unlabelled)") != std::string::npos);
  // A one-point curve still shows its point.
  REQUIRE(count(chart(html, "curve-trials-0"), "class=\"end\"") == 1);
}

TEST_CASE("the report renders a log of errors only", "[report]") {
  LoadedLog log;
  TaskInfo t = task_info();
  log.records.push_back(failed(t, "online/random/seed=1", 0, MeasureError::CompileError, "boom"));
  log.records.push_back(
      failed(t, "online/random/seed=1", 1, MeasureError::RuntimeCrash, "SIGSEGV"));
  log.records.push_back(failed(t, "online/random/seed=1", 2, MeasureError::RuntimeCrash, "SIGBUS"));
  log.warnings.push_back("log.jsonl:4: skipped: not valid JSON");
  std::string html = report::render_report(log);
  require_page(html);
  REQUIRE(html.find("3 of 3 trials failed") != std::string::npos);
  REQUIRE(html.find("has a valid time yet") != std::string::npos);
  REQUIRE(count(chart(html, "space-0"), "class=\"px\"") == 3);
  REQUIRE(html.find("log.jsonl:4: skipped") != std::string::npos);
  REQUIRE(html.find("1 damaged log lines were skipped") != std::string::npos);
}

TEST_CASE("the report samples 100,000 records, says so, and stays fast", "[report]") {
  LoadedLog log;
  TaskInfo t = task_info(256);
  const int n = 100000;
  log.records.reserve(n);
  for (int i = 0; i < n; ++i) {
    // Tile choices from a fixed pattern; speed peaks at a=16, b=32.
    std::int64_t a = 1 << (i % 7), b = 1 << (i / 7 % 8);
    double gflops = 200 - std::abs(std::log2(a) - 4) * 20 - std::abs(std::log2(b) - 5) * 10 +
                    static_cast<double>(i % 13);
    Record r = i % 50 == 49 ? failed(t, "online/evolutionary/seed=1", i, MeasureError::Timeout, "t")
                            : make_record(t, "online/evolutionary/seed=1", i, 1 / gflops,
                                          {0, a, b, 1, 64}, gflops / 100 + (i % 5) * 0.1);
    log.records.push_back(std::move(r));
  }
  for (int i = 0; i < n / 16; ++i)
    log.rounds.push_back(round("online/evolutionary/seed=1", t.workload_key, i, 0.7));

  report::ReportOptions options;
  auto start = std::chrono::steady_clock::now();
  std::string html = report::render_report(log, options);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN("rendered 100,000 records in " << seconds << " s, " << html.size() / 1024 << " KiB");
  REQUIRE(seconds < 10); // "within a few seconds", with room for a sanitizer build
  require_page(html);
  REQUIRE(html.find("This log has 100,000 trials") != std::string::npos);
  REQUIRE(count(html, "class=\"sampled\"") >= 3);
  REQUIRE(count(chart(html, "model-scatter"), "class=\"pt\"") == options.max_points);
  REQUIRE(count(chart(html, "space-0"), "class=\"pt\"") == options.max_points);
  REQUIRE(html.size() < 8u << 20);
}

TEST_CASE("the same log gives the same page", "[report]") {
  LoadedLog log = known_log();
  report::ReportOptions options;
  options.max_points = 3; // sampling is deterministic too
  REQUIRE(report::render_report(log, options) == report::render_report(log, options));
  REQUIRE(count(chart(report::render_report(log, options), "model-scatter"), "class=\"pt\"") == 3);
}

TEST_CASE("the report escapes what the log says", "[report]") {
  LoadedLog log;
  log.records.push_back(make_record(task_info(), "online/<script>alert(1)</script>", 0, 0.01));
  std::string html = report::render_report(log);
  REQUIRE(html.find("<script") == std::string::npos);
  REQUIRE(html.find("&lt;script&gt;") != std::string::npos);
}

TEST_CASE("the report of several tasks names each task", "[report]") {
  LoadedLog log;
  TaskInfo a = task_info(64), b = task_info(128);
  log.records.push_back(make_record(a, "online/random/seed=1", 0, 0.01, {0, 2, 2, 1, 0}));
  log.records.push_back(make_record(b, "online/random/seed=1", 0, 0.02, {0, 4, 4, 1, 0}));
  std::string html = report::render_report(log);
  require_page(html);
  REQUIRE(html.find("M=64 N=64 K=64") != std::string::npos);
  REQUIRE(html.find("M=128 N=128 K=128") != std::string::npos);
  chart(html, "curve-trials-1");
}

TEST_CASE("the report places template configs by their knobs", "[report]") {
  LoadedLog log;
  TaskInfo t = task_info();
  for (int i = 0; i < 12; ++i) {
    Record r = make_record(t, "online/grid/seed=1", i, 1 / (10.0 + i));
    r.config.template_name = "matmul_tiles";
    r.config.knobs = {{"tile_i", i % 4}, {"tile_j", i / 4}, {"unroll", 0}};
    // The steps the knobs made: one program per config.
    r.config.steps = {schedule::SplitStep{"C", "i", {i % 4 + 1}},
                      schedule::SplitStep{"C", "j", {i / 4 + 1}}};
    log.records.push_back(r);
  }
  std::string html = report::render_report(log);
  require_page(html);
  std::string space = chart(html, "space-0");
  REQUIRE(count(space, "class=\"pt\"") == 12);
  REQUIRE(space.find("tile_i") != std::string::npos);
  REQUIRE(space.find("tile_j") != std::string::npos);
  REQUIRE(space.find("unroll (value") == std::string::npos); // it never varies
  REQUIRE(section(html, "best-configs").find("matmul_tiles tile_i=3 tile_j=2") !=
          std::string::npos);
}

TEST_CASE("write_report writes the page or says why it cannot", "[report]") {
  auto dir = std::filesystem::temp_directory_path() / "kiln_report_test";
  std::filesystem::create_directories(dir);
  std::string log_path = (dir / "log.jsonl").string();
  std::string out = (dir / "report.html").string();
  std::filesystem::remove(log_path);
  {
    auto writer = LogWriter::open(log_path);
    REQUIRE(writer.ok());
    LoadedLog known = known_log();
    REQUIRE_FALSE((*writer)->append(known.records));
    REQUIRE_FALSE((*writer)->append(known.rounds.front()));
  }
  REQUIRE_FALSE(report::write_report(std::vector<std::string>{log_path}, out));
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  require_page(text.str());
  REQUIRE(text.str().find(log_path) != std::string::npos); // sources default to the logs
  REQUIRE(text.str().find("<div class=\"v\">125</div>") != std::string::npos);

  auto err = report::write_report(LoadedLog{}, (dir / "no/such/dir/report.html").string());
  REQUIRE(err);
  REQUIRE(err->id() == "cannot-write-report");
  REQUIRE(err->message().find("no/such/dir") != std::string::npos);

  // `kiln report LOG -o LOG` must not replace the log with the page, under
  // any name the log goes by.
  const auto log_size = std::filesystem::file_size(log_path);
  for (const std::string& same : {log_path, (dir / "." / "log.jsonl").string()}) {
    auto refused = report::write_report(std::vector<std::string>{log_path}, same);
    REQUIRE(refused);
    CHECK(refused->id() == "output-is-input");
  }
  CHECK(std::filesystem::file_size(log_path) == log_size);
  auto into_dir = report::write_report(std::vector<std::string>{log_path}, dir.string());
  REQUIRE(into_dir);
  CHECK(into_dir->id() == "cannot-write");
  std::filesystem::remove_all(dir);
}

namespace {

/// Steps of a tiled matmul that replay on test::matmul_dag: i and j in three
/// levels, k inside, the outer loop parallel, the inner j vectorized.
std::vector<schedule::Step> tiled_steps(std::int64_t i1, std::int64_t i2, std::int64_t j1,
                                        std::int64_t j2, std::int64_t unroll) {
  using namespace schedule;
  return {SplitStep{"C", "i", {i1, i2}},
          SplitStep{"C", "j", {j1, j2}},
          ReorderStep{"C", {"i.0", "j.0", "i.1", "j.1", "k", "i.2", "j.2"}},
          AnnotateStep{"C", "i.0", Annotation::Parallel},
          AnnotateStep{"C", "j.2", Annotation::Vectorize},
          PragmaStep{"C", unroll}};
}

/// A log like `kiln compare` would leave for a 512³ matmul: online
/// evolutionary and random runs, a hybrid and an offline run, round lines,
/// errors, model scores, and a library baseline.
LoadedLog demo_log() {
  TaskInfo t = TaskInfo::from_dag(test::matmul_dag(512, 512, 512), "ops/matmul.kop");
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0, 1);
  const std::int64_t factors[] = {1, 2, 4, 8, 16, 32};
  const std::int64_t unrolls[] = {0, 16, 64, 512};
  auto speed = [&](std::int64_t i2, std::int64_t j2, std::int64_t unroll) {
    // Peaks at a 4×32 register tile with unroll 64; 180 GFLOPS at best.
    double g = 180 * std::exp(-0.35 * std::pow(std::log2(i2) - 2, 2)) *
               std::exp(-0.25 * std::pow(std::log2(j2) - 5, 2)) *
               (unroll == 64    ? 1.0
                : unroll == 16  ? 0.9
                : unroll == 512 ? 0.85
                                : 0.7);
    return std::max(1.0, g * (0.85 + 0.2 * unit(rng)));
  };
  LoadedLog log;
  double clock = 1764690000;
  auto run = [&](const std::string& label, int trials, bool guided, bool naive, bool rounds) {
    double start = clock, elapsed = 0, best = 0;
    std::int64_t trial = 0;
    if (naive) {
      Record r = make_record(t, label, trial++, t.flops / 1.9e9);
      r.timestamp = clock += 2.5;
      log.records.push_back(r);
    }
    for (int round_no = 0; trial < trials; ++round_no) {
      RoundRecord st;
      st.run = label;
      st.workload_key = t.workload_key;
      st.round = round_no;
      st.sampled = 16;
      st.predicted = guided ? 2048 : 0;
      st.sample_seconds = guided ? 0.4 + 0.002 * round_no : 0.01;
      std::vector<double> scores, truth;
      for (int k = 0; k < 16 && trial < trials; ++k) {
        // A guided search drifts towards the good tiles as the model learns.
        double skill = guided ? std::min(0.8, 0.1 * round_no) : 0;
        auto pick = [&](int good, int n) {
          return unit(rng) < skill ? good + static_cast<int>(unit(rng) * 2) % 2
                                   : static_cast<int>(unit(rng) * n);
        };
        std::int64_t i1 = factors[pick(2, 6)], i2 = factors[pick(2, 5)];
        std::int64_t j1 = factors[pick(1, 4)], j2 = factors[std::min(5, pick(4, 6))];
        std::int64_t unroll = unrolls[pick(2, 4)];
        double g = speed(i2, j2, unroll);
        Record r = make_record(t, label, trial++, t.flops / (g * 1e9));
        r.config.point = {0, 512 / (i1 * i2), i1, i2, 512 / (j1 * j2), j1, j2, 1, unroll};
        r.config.steps = tiled_steps(i1, i2, j1, j2, unroll);
        double u = unit(rng);
        if (u < 0.03) {
          r.result.costs.clear();
          r.result.error = u < 0.01 ? MeasureError::CompileError : MeasureError::Timeout;
          r.result.message = u < 0.01 ? "LLVM: invalid vector width" : "ran past 10 s";
        } else if (u < 0.04) {
          r.result.costs.clear();
          r.result.error = MeasureError::WrongAnswer;
          r.result.message = "C[17, 3]: got 12.5, want 12.75";
        }
        if (guided && round_no > 0) {
          double noise = std::max(0.3, 1.2 - 0.08 * round_no);
          r.predicted = std::log(g) + noise * (unit(rng) - 0.5) * 3;
          scores.push_back(r.predicted);
          truth.push_back(r.result.ok() ? g : 0);
        }
        r.timestamp = clock += 0.15 + 0.05 * unit(rng);
        if (r.result.ok())
          best = std::max(best, g);
        st.errors += r.result.ok() ? 0 : 1;
        ++st.measured;
        log.records.push_back(r);
      }
      if (!scores.empty()) {
        std::int64_t agree = 0, pairs = 0;
        for (std::size_t a = 0; a < scores.size(); ++a)
          for (std::size_t b = a + 1; b < scores.size(); ++b)
            if (truth[a] != truth[b]) {
              ++pairs;
              agree += (scores[a] > scores[b]) == (truth[a] > truth[b]);
            }
        st.model_accuracy = pairs ? static_cast<double>(agree) / static_cast<double>(pairs) : -1;
      }
      st.measure_seconds = 16 * 0.17;
      st.update_seconds = guided ? 0.3 + 0.01 * round_no : 0;
      clock += st.sample_seconds + st.update_seconds;
      elapsed = clock - start;
      st.elapsed_seconds = elapsed;
      st.best_gflops = best;
      st.trials = trial;
      if (rounds)
        log.rounds.push_back(st);
    }
    clock += 30;
  };
  run("online/evolutionary/seed=1", 400, true, true, true);
  run("online/random/seed=1", 400, false, true, true);
  run("hybrid/evolutionary/seed=1", 96, true, false, true);
  Record pick = make_record(t, "offline/evolutionary/seed=1", 0, t.flops / 141e9);
  pick.config.point = {0, 16, 8, 4, 4, 4, 32, 1, 64};
  pick.config.steps = tiled_steps(8, 4, 4, 32, 64);
  pick.predicted = 5.1;
  pick.timestamp = clock += 4;
  log.records.push_back(pick);
  Record blas = make_record(t, "baseline/OpenBLAS 0.3.21 sgemm (Haswell)", 0, t.flops / 152e9);
  log.records.push_back(blas);
  log.lines = static_cast<std::int64_t>(log.records.size() + log.rounds.size());
  return log;
}

} // namespace

// Not a test: writes the report of a realistic synthetic log, or of the logs
// in $KILN_REPORT_LOGS (colon-separated) until `kiln report` is there, to
// $KILN_REPORT_DEMO (default report-demo.html), for scripts/screenshot-report.
// Run it by name: report_tests "[.demo]"
TEST_CASE("a demo report to look at", "[.demo]") {
  const char* out = std::getenv("KILN_REPORT_DEMO");
  std::string path = out ? out : "report-demo.html";
  report::ReportOptions options;
  if (const char* logs = std::getenv("KILN_REPORT_LOGS")) {
    std::vector<std::string> paths;
    std::stringstream list(logs);
    for (std::string p; std::getline(list, p, ':');)
      paths.push_back(p);
    options.command = std::string("KILN_REPORT_LOGS=") + logs + " report_tests \"[.demo]\"";
    REQUIRE_FALSE(report::write_report(paths, path, options));
    return;
  }
  options.command = "kiln compare ops/matmul.kop --set M=512 --set N=512 --set K=512 "
                    "--trials 400 --log matmul.jsonl";
  options.sources = {"matmul.jsonl"};
  REQUIRE_FALSE(report::write_report(demo_log(), path, options));
}
