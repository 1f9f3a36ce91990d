// `mpirun -np 3 kiln tune …` on this machine (oversubscribed): the records
// of one process, every trial measured once, a rank that dies with a batch
// in flight, and a real op whose log kiln best, report and --resume accept.
#include "kiln/record/tuning_log.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>

using namespace kiln;

namespace {

const std::string kKiln = KILN_BUILD_DIR "/kiln";
const std::string kMatmul = KILN_SOURCE_DIR "/ops/matmul.kop";

struct Ran {
  int code;
  std::string output;
};

/// Runs a shell command; its exit code and what it printed (both streams).
Ran run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> chunk;
  while (std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe))
    output.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

/// mpirun with N ranks on this machine, as root too (CI runs as root);
/// `env`: "-x NAME=VALUE" for the ranks.
std::string mpirun(int ranks, const std::string& env = "") {
  return fmt::format("{} --oversubscribe --allow-run-as-root {} -np {} {}", KILN_MPIEXEC, env,
                     ranks, kKiln);
}

std::string temp(const std::string& name) {
  const std::string path = (std::filesystem::temp_directory_path() / ("kiln-mpi-" + name)).string();
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".best.json");
  return path;
}

std::vector<record::Record> records_of(const std::string& log) {
  auto loaded = record::load_log(log);
  REQUIRE(loaded.ok());
  return loaded->records;
}

/// A small simulated tuning run of `trials` trials.
std::string small_simulated(std::size_t trials) {
  return fmt::format("tune {} --set M=32 --set N=32 --set K=32 --simulate 0 --trials {} --batch 9 "
                     "--confirm-top 0 --seed 3 --retrain-growth 0.3",
                     kMatmul, trials);
}

} // namespace

TEST_CASE("three ranks log the records of one process, each trial once, rank and host added",
          "[mpi]") {
  const std::string one = temp("one.jsonl"), three = temp("three.jsonl");
  // A job pipelines its rounds (proposing while a batch is measured); so
  // does this run alone.
  Ran alone = run(kKiln + " " + small_simulated(48) + " --pipeline --log " + one);
  INFO(alone.output);
  REQUIRE(alone.code == 0);
  Ran job = run(mpirun(3) + " " + small_simulated(48) + " --log " + three);
  INFO(job.output);
  REQUIRE(job.code == 0);
  CHECK_THAT(job.output, Catch::Contains("cluster: 3 ranks"));
  const auto a = records_of(one), b = records_of(three);
  REQUIRE(a.size() == 48);
  REQUIRE(b.size() == a.size());
  std::set<std::string> programs;
  std::set<int> ranks;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(b[i].config.steps == a[i].config.steps);
    CHECK(b[i].result.costs == a[i].result.costs);
    CHECK(b[i].trial == a[i].trial);
    CHECK_FALSE(b[i].result.host.empty());
    ranks.insert(b[i].result.rank);
    programs.insert(b[i].config.program()->to_string());
  }
  CHECK(programs.size() == b.size()); // every trial a program of its own, measured once
  CHECK(ranks == std::set<int>{0, 1, 2});
}

TEST_CASE("a rank that dies loses its batch in flight, and --resume redoes it with no trial twice",
          "[mpi]") {
  const std::string log = temp("killed.jsonl");
  // Rank 2 dies on its third batch: the job stops with mpirun's message.
  Ran killed = run(mpirun(3, "-x KILN_CLUSTER_FAIL_AFTER=2:2") + " " + small_simulated(48) +
                   " --log " + log);
  INFO(killed.output);
  CHECK(killed.code != 0);
  const auto before = records_of(log);
  CHECK(before.size() > 0);
  CHECK(before.size() < 48);
  // A resumed run's --trials is its own budget: the trials left.
  const std::string rest = " --log " + log + " --resume";
  Ran resumed = run(mpirun(3) + " " + small_simulated(48 - before.size()) + rest);
  INFO(resumed.output);
  REQUIRE(resumed.code == 0);
  const auto after = records_of(log);
  REQUIRE(after.size() == 48);
  std::set<std::string> programs;
  for (std::size_t i = 0; i < after.size(); ++i) {
    CHECK(after[i].trial == static_cast<std::int64_t>(i));
    programs.insert(after[i].config.program()->to_string());
  }
  CHECK(programs.size() == after.size());
}

TEST_CASE("a real op tuned on three ranks: kiln best, report and --resume accept its log",
          "[mpi]") {
  const std::string log = temp("real.jsonl"), report = temp("real.html");
  const std::string op = kMatmul + " --set M=24 --set N=40 --set K=16 --batch 6";
  Ran job = run(mpirun(3) + " tune " + op + " --trials 18 --log " + log);
  INFO(job.output);
  REQUIRE(job.code == 0);
  CHECK_THAT(job.output, Catch::Contains("best:"));
  std::set<int> ranks;
  for (const record::Record& r : records_of(log))
    ranks.insert(r.result.rank);
  CHECK(ranks == std::set<int>{0, 1, 2});
  Ran best = run(kKiln + " best " + log);
  INFO(best.output);
  CHECK(best.code == 0);
  CHECK_THAT(best.output, Catch::Contains("1 tasks with a valid config"));
  Ran drawn = run(kKiln + " report " + log + " -o " + report);
  INFO(drawn.output);
  CHECK(drawn.code == 0);
  CHECK(std::filesystem::exists(report));
  Ran more = run(mpirun(3) + " tune " + op + " --trials 24 --log " + log + " --resume");
  INFO(more.output);
  CHECK(more.code == 0);
  std::filesystem::remove(report);
}
