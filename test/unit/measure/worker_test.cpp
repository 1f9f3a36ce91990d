// kiln-worker in a multithreaded host: the isolated runner, the isolated
// reference and `kiln run`'s isolated call start the worker with
// posix_spawn, never with fork, so a host's busy threads (and the locks they
// hold) cannot hang it; and a worker that is missing, or of another build,
// is a clear Error.
#include "../ir/test_dags.h"

#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/measure/measurer.h"
#include "kiln/measure/run.h"
#include "kiln/schedule/lower.h"
#include "kiln/support/install_paths.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <pthread.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kiln;
using namespace kiln::measure;
using record::MeasureError;
using record::MeasureResult;

namespace {

RunnerOptions quick_options() {
  RunnerOptions o;
  o.timing.repeat = 2;
  o.timing.min_repeat_ms = 1;
  o.timeout_seconds = 10;
  return o;
}

codegen::ObjectCode compile(const schedule::LoweredFunc& f) {
  auto object = compile_object(f, codegen::host_target());
  REQUIRE(object.ok());
  return *object;
}

/// What a compiler's threads do to a process: four threads allocating and
/// freeing (malloc's locks) and taking a mutex of their own, all the time.
/// A fork taken while one of them holds a lock leaves it held for ever in
/// the child, whose only thread is the forking one.
class BusyHost {
public:
  BusyHost() {
    for (int t = 0; t < 4; ++t)
      threads_.emplace_back([this, t] {
        std::vector<std::unique_ptr<char[]>> blocks;
        while (!stop_) {
          std::lock_guard<std::mutex> lock(mutex_);
          for (int i = 0; i < 64; ++i)
            blocks.emplace_back(new char[static_cast<std::size_t>((i * 97 + t) % 4096 + 1)]);
          blocks.clear();
          ++rounds_;
        }
      });
    while (rounds_ < 4)
      std::this_thread::yield();
  }
  ~BusyHost() {
    stop_ = true;
    for (std::thread& t : threads_)
      t.join();
  }
  std::int64_t rounds() const { return rounds_; }

private:
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> rounds_{0};
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

std::atomic<int> forks{0};

/// Counts every fork of this process from now on (pthread_atfork's prepare
/// handler runs in the forking process before each fork; posix_spawn runs
/// none).
void count_forks() {
  static std::once_flag once;
  std::call_once(once, [] { ::pthread_atfork([] { ++forks; }, nullptr, nullptr); });
}

ir::ComputeDAG parse(const std::string& text) {
  auto dag = ir::parse_op(text, "test.kop");
  if (!dag)
    FAIL(dag.error().render());
  return std::move(*dag);
}

/// A folder of this test's files, made empty.
std::filesystem::path temp_folder(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("kiln-worker-test-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

} // namespace

TEST_CASE("a host whose threads are busy measures in isolation and gets correct results",
          "[measure][isolate][worker]") {
  BusyHost host;
  ir::ComputeDAG dag = test::matmul_dag(32, 32, 32);
  MeasureOptions options;
  options.runner = quick_options();
  options.build_threads = 2;
  REQUIRE(options.isolate);
  auto m = ProgramMeasurer::create(dag, codegen::host_target(), options);
  REQUIRE(m.ok());
  schedule::State naive(dag), tiled(dag), parallel(dag);
  tiled.split("C", "j", {8});
  tiled.vectorize("C", "j.1");
  parallel.parallel("C", "i");
  for (int round = 0; round < 3; ++round) {
    auto results = (*m)->measure(std::vector<schedule::State>{naive, tiled, parallel});
    REQUIRE(results.size() == 3);
    for (const MeasureResult& r : results) {
      INFO(r.message);
      REQUIRE(r.ok()); // checked against the reference, and timed
      REQUIRE(r.median() > 0);
    }
  }
  // An op with constant inputs (packed ahead by the kernel's prepack) goes
  // to the worker as its text too, and comes back checked.
  ir::ComputeDAG dense = parse("op dense\ninput X : f32[4, 8]\nconst input W : f32[6, 8]\n"
                               "output Y[b < 4, o < 6] = sum(X[b, i] * W[o, i] for i < 8)\n");
  auto d = ProgramMeasurer::create(dense, codegen::host_target(), options);
  REQUIRE(d.ok());
  auto dense_results = (*d)->measure(std::vector<schedule::State>{schedule::State(dense)});
  INFO(dense_results[0].message);
  REQUIRE(dense_results[0].ok());
  REQUIRE(host.rounds() > 0);
}

TEST_CASE("isolated measurement never forks: no atfork handler runs",
          "[measure][isolate][worker]") {
  count_forks();
  const int before = forks;
  BusyHost host;
  Target target = codegen::host_target();
  ir::ComputeDAG dag = test::matmul_dag(8, 8, 8);

  // The reference, computed in the worker.
  auto ref = Reference::create(dag, target, 1, {}, Isolation{true, 60, "--ref"});
  REQUIRE(ref.ok());
  REQUIRE(ref->interpreter_check().passed);

  // The runner: a good kernel, a crash, the worker started again, a good
  // kernel.
  auto runner = make_isolated_runner(dag, *ref, quick_options());
  REQUIRE(runner.ok());
  schedule::LoweredFunc crashing = schedule::lower_naive(dag);
  crashing.body =
      schedule::Store::make("C", {ir::Expr(std::int64_t{1} << 40), ir::Expr(0)}, ir::Expr(1.0));
  codegen::ObjectCode good = compile(schedule::lower_naive(dag));
  REQUIRE((*runner)->run(good).ok());
  MeasureResult crashed = (*runner)->run(compile(crashing));
  REQUIRE(crashed.error == MeasureError::RuntimeCrash);
  REQUIRE_THAT(crashed.message, Catch::Contains("signal 11"));
  REQUIRE((*runner)->run(good).ok());

  // `kiln run`'s isolated call.
  RunOptions run;
  run.isolation = Isolation{true, 60, "--timeout"};
  run.timing.repeat = 2;
  run.timing.min_repeat_ms = 1;
  auto report = compile_and_run(dag, schedule::lower_naive(dag), target, run);
  REQUIRE(report.ok());
  REQUIRE(report->check.passed);

  // A whole measurer.
  MeasureOptions options;
  options.runner = quick_options();
  auto m = ProgramMeasurer::create(dag, target, options);
  REQUIRE(m.ok());
  REQUIRE((*m)->measure(std::vector<schedule::State>{schedule::State(dag)})[0].ok());
  REQUIRE(forks == before);

  // The handler does see a fork.
  pid_t pid = ::fork();
  if (pid == 0)
    ::_exit(0);
  REQUIRE(pid > 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(forks == before + 1);
}

TEST_CASE("a missing worker is a clear error naming the path and the fix",
          "[measure][isolate][worker]") {
  Target target = codegen::host_target();
  ir::ComputeDAG dag = test::matmul_dag(4, 4, 4);
  auto ref = Reference::create(dag, target, 1);
  REQUIRE(ref.ok());

  // Named by the options: the runner, and the measurer (its reference).
  RunnerOptions o = quick_options();
  o.worker = "/nonexistent/kiln-worker";
  auto runner = make_isolated_runner(dag, *ref, o);
  REQUIRE_FALSE(runner.ok());
  REQUIRE(runner.error().id() == "worker-missing");
  REQUIRE_THAT(runner.error().message(),
               Catch::Contains("'/nonexistent/kiln-worker' (named by the measure options)") &&
                   Catch::Contains("No such file") && Catch::Contains("KILN_WORKER") &&
                   Catch::Contains("--target kiln-worker"));
  MeasureOptions options;
  options.runner = o;
  auto m = ProgramMeasurer::create(dag, target, options);
  REQUIRE_FALSE(m.ok());
  REQUIRE(m.error().id() == "worker-missing");

  // A folder is not a worker either.
  o.worker = temp_folder("folder").string();
  auto folder = make_isolated_runner(dag, *ref, o);
  REQUIRE_FALSE(folder.ok());
  REQUIRE(folder.error().id() == "worker-missing");

  // Named by KILN_WORKER: the reference and `kiln run`'s call.
  ::setenv("KILN_WORKER", "/nonexistent/by-env/kiln-worker", 1);
  auto by_env = Reference::create(dag, target, 1, {}, Isolation{true, 30, "--ref"});
  RunOptions run;
  run.isolation.enabled = true;
  auto run_report = compile_and_run(dag, schedule::lower_naive(dag), target, run);
  ::unsetenv("KILN_WORKER");
  REQUIRE_FALSE(by_env.ok());
  REQUIRE(by_env.error().id() == "worker-missing");
  REQUIRE_THAT(by_env.error().message(),
               Catch::Contains("'/nonexistent/by-env/kiln-worker' (named by KILN_WORKER)"));
  REQUIRE_FALSE(run_report.ok());
  REQUIRE(run_report.error().id() == "worker-missing");

  // Without either, the build tree's worker.
  REQUIRE(worker_executable() == std::string(KILN_BUILD_DIR) + "/kiln-worker");
}

TEST_CASE("a worker of another build is refused", "[measure][isolate][worker]") {
  Target target = codegen::host_target();
  ir::ComputeDAG dag = test::matmul_dag(4, 4, 4);
  // The library's side: a worker that exits as a worker of another build.
  auto dir = temp_folder("other-build");
  auto fake = dir / "kiln-worker";
  std::ofstream(fake) << "#!/bin/sh\nexit 5\n";
  std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
  auto ref = Reference::create(dag, target, 1, {}, Isolation{true, 30, "--ref", fake.string()});
  REQUIRE_FALSE(ref.ok());
  REQUIRE(ref.error().id() == "worker-mismatch");
  REQUIRE_THAT(ref.error().message(),
               Catch::Contains(fake.string()) && Catch::Contains("another build of kiln"));

  // The worker's side: a hello it does not know, and no hello at all.
  auto hello = dir / "hello";
  {
    std::ofstream out(hello, std::ios::binary);
    const std::string other = "kiln-worker protocol 0 kiln 0.0.0";
    std::uint64_t n = other.size();
    out.write(reinterpret_cast<const char*>(&n), sizeof n);
    out << other;
  }
  auto exit_code = [&](const std::string& input) {
    std::string command = "'" + worker_executable() + "' 3<'" + input + "' 4>/dev/null 2>/dev/null";
    int status = std::system(command.c_str());
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
  };
  REQUIRE(exit_code(hello.string()) == 5);
  REQUIRE(exit_code("/dev/null") == 6);
}
