// kiln-network-bench: a whole ONNX model as kiln runs it, against
// onnxruntime's CPU provider (bench/onnxruntime/ort-run.js), in the same run.
//
// The network is exactly what `kiln run MODEL --log LOG --threads T` builds:
// the same import, each task's best record in the log for the host (or the
// naive schedule), CompiledNetwork::compile, the runtime's thread count set
// with kiln_rt_set_num_threads. Both runtimes read the same seeded inputs
// (raw f32 files) and their outputs are compared before anything is timed.
//
// Timing alternates in one run, per thread count: two ort-run.js processes
// in serve mode (spinning on and off) answer `time R W` on a pipe while kiln
// runs in this process; each round times kiln and both onnxruntime settings,
// the order of kiln and onnxruntime swapping between rounds, with a pause
// between turns so that no side's spinning workers take a core from the
// other. The figures are the best round's medians; onnxruntime's is the
// better of spinning on and off (bench/onnxruntime/README.md).
#include "fma_peak.h"

#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/graph/network.h"
#include "kiln/network/compiled_network.h"
#include "kiln/network/network_run.h"
#include "kiln/record/tuning_log.h"
#include "kiln/support/error.h"
#include "kiln/support/stopwatch.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

extern char** environ;

using namespace kiln;
using nlohmann::json;

namespace {

struct Options {
  std::string model;
  std::vector<std::string> logs;
  std::vector<int> threads{1, 2};
  int rounds = 5;
  int repeats = 20;
  int warmup = 3;
  double pause_ms = 50;
  std::uint64_t seed = 1;
  std::string ort_dir = KILN_SOURCE_DIR "/bench/onnxruntime";
  std::string json_file;
};

/// Loading a large model in onnxruntime, or one `time R` of a slow one, takes
/// seconds; a child silent for this long is stuck.
constexpr double kChildTimeoutS = 600;

/// What stops the benchmark. Thrown rather than exiting so that the
/// destructors on the way out kill the node processes and remove the
/// temporary files.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename T> T take(Expected<T> e) {
  if (!e)
    throw BenchError(e.error().render());
  return std::move(*e);
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double minimum(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

void pause_ms(double ms) {
  std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

// --- files ---

/// A private folder for the input and output files, removed at the end.
class TempDir {
public:
  TempDir() {
    std::string name = (std::filesystem::temp_directory_path() / "kiln-network-bench.XXXXXX");
    if (::mkdtemp(name.data()) == nullptr)
      throw BenchError(fmt::format("cannot create a temporary folder: {}", std::strerror(errno)));
    path_ = name;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

void write_f32(const std::string& path, const float* data, std::int64_t n) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * 4));
  out.close();
  if (!out)
    throw BenchError(fmt::format("cannot write '{}'", path));
}

std::vector<float> read_f32(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw BenchError(fmt::format("cannot read '{}'", path));
  const auto bytes = static_cast<std::size_t>(in.tellg());
  if (bytes % 4 != 0)
    throw BenchError(fmt::format("'{}' has {} bytes, not a whole number of floats", path, bytes));
  std::vector<float> v(bytes / 4);
  in.seekg(0);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(bytes));
  if (!in)
    throw BenchError(fmt::format("cannot read '{}'", path));
  return v;
}

// --- the network's buffers ---

/// One 64-byte aligned f32 buffer per graph input or output, as
/// CompiledNetwork::run wants them.
class Buffers {
public:
  Buffers(const graph::Graph& g, const std::vector<int>& tensors) {
    for (int t : tensors) {
      const std::int64_t n = g.tensor(t).num_elements();
      const auto bytes = static_cast<std::size_t>((n * 4 + 63) / 64 * 64);
      auto* p = static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(bytes, 64)));
      if (p == nullptr)
        throw BenchError("out of memory for the network's inputs and outputs");
      std::memset(p, 0, bytes);
      owned_.emplace_back(p);
      pointers_.push_back(p);
      counts_.push_back(n);
    }
  }
  float* const* data() const { return pointers_.data(); }
  float* at(std::size_t i) const { return pointers_[i]; }
  std::int64_t count(std::size_t i) const { return counts_[i]; }
  std::size_t size() const { return pointers_.size(); }

private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::vector<std::unique_ptr<float, Free>> owned_;
  std::vector<float*> pointers_;
  std::vector<std::int64_t> counts_;
};

// --- child processes ---

/// A child process with its stdin and stdout on pipes; its stderr is ours,
/// so node's own messages reach the user. Killed and reaped when destroyed
/// unless it has already been waited for.
class Child {
public:
  explicit Child(const std::vector<std::string>& argv)
      : command_(fmt::format("{}", fmt::join(argv, " "))) {
    int to_child[2], from_child[2];
    // Close-on-exec, so that a second child does not hold the first's pipes
    // open (its end of input would never come).
    if (::pipe2(to_child, O_CLOEXEC) != 0)
      throw BenchError(fmt::format("pipe: {}", std::strerror(errno)));
    if (::pipe2(from_child, O_CLOEXEC) != 0) {
      ::close(to_child[0]);
      ::close(to_child[1]);
      throw BenchError(fmt::format("pipe: {}", std::strerror(errno)));
    }
    in_ = to_child[1];
    out_ = from_child[0];
    const int rc = spawn(argv, to_child[0], from_child[1]);
    ::close(to_child[0]);
    ::close(from_child[1]);
    if (rc != 0) {
      close_stdin();
      ::close(out_);
      throw BenchError(fmt::format("cannot start '{}': {} (node, Node.js 18 or later, must be "
                                   "on PATH)",
                                   command_, std::strerror(rc)));
    }
  }

  ~Child() {
    close_stdin();
    if (out_ >= 0)
      ::close(out_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  const std::string& command() const { return command_; }

  void write_line(const std::string& line) {
    const std::string text = line + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(in_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        throw BenchError(
            fmt::format("'{}' stopped reading its input: {}", command_, std::strerror(errno)));
      done += static_cast<std::size_t>(n);
    }
  }

  /// The next line of its output; none at the end of its output.
  std::optional<std::string> read_line(double timeout_s) {
    Stopwatch clock;
    while (true) {
      if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      if (eof_)
        return std::nullopt;
      const double left_ms = timeout_s * 1e3 - clock.elapsed_ms();
      if (left_ms <= 0)
        throw BenchError(fmt::format("'{}' said nothing for {:.0f} s", command_, timeout_s));
      pollfd p{out_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min(left_ms, 1e9)) + 1);
      if (ready <= 0)
        continue; // timed out (checked above) or interrupted
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        eof_ = true;
      else
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  void close_stdin() {
    if (in_ >= 0)
      ::close(in_);
    in_ = -1;
  }

  /// Waits for it to exit: its exit code, or 128 + the signal that ended it.
  int wait(double timeout_s) {
    Stopwatch clock;
    while (pid_ > 0) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        break;
      }
      if (r < 0 && errno != EINTR)
        throw BenchError(fmt::format("waitpid: {}", std::strerror(errno)));
      if (clock.elapsed_ms() > timeout_s * 1e3)
        throw BenchError(fmt::format("'{}' did not exit within {:.0f} s", command_, timeout_s));
      pause_ms(5);
    }
    return exit_code_;
  }

private:
  /// posix_spawn rather than fork: this process holds the JIT and a thread
  /// pool. SIGPIPE, which this process ignores, is reset to its default in
  /// the child.
  int spawn(const std::vector<std::string>& argv, int child_in, int child_out) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_in, STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, child_out, STDOUT_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, args[0], &actions, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0)
      pid_ = -1;
    return rc;
  }

  std::string command_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
  int in_ = -1, out_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

json parse_json(const std::string& line, const std::string& from) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    throw BenchError(
        fmt::format("'{}' answered with something that is not a JSON object: {}", from, line));
  if (j.contains("error"))
    throw BenchError(fmt::format("'{}' answered with an error: {}", from, j["error"].dump()));
  return j;
}

// --- onnxruntime ---

/// Where ort-run.js is, checked before anything is compiled.
struct OrtHarness {
  std::string dir, script;
};

OrtHarness locate_ort(const std::string& dir) {
  OrtHarness ort{dir, dir + "/ort-run.js"};
  if (!std::filesystem::exists(ort.script))
    throw BenchError(fmt::format("no ort-run.js in '{}' (--ort names the folder of kiln's "
                                 "bench/onnxruntime)",
                                 dir));
  if (!std::filesystem::exists(dir + "/node_modules/onnxruntime-node"))
    throw BenchError(fmt::format("onnxruntime-node is not installed in '{}/node_modules': run "
                                 "{}/install first",
                                 dir, dir));
  return ort;
}

std::vector<std::string> ort_command(const OrtHarness& ort, const std::string& model,
                                     const std::vector<std::string>& inputs) {
  return {"node", ort.script, model, "--inputs", fmt::format("{}", fmt::join(inputs, ","))};
}

/// onnxruntime's outputs for the input files, from one run.
struct OrtReference {
  std::string version;
  std::vector<std::vector<float>> outputs;
};

OrtReference ort_reference(const OrtHarness& ort, const std::string& model,
                           const std::vector<std::string>& inputs, const std::string& prefix) {
  std::vector<std::string> argv = ort_command(ort, model, inputs);
  argv.insert(argv.end(), {"--write-outputs", prefix, "--repeats", "0"});
  Child child(argv);
  child.close_stdin();
  std::string text;
  while (auto line = child.read_line(kChildTimeoutS))
    text += *line;
  if (const int code = child.wait(kChildTimeoutS); code != 0)
    throw BenchError(
        fmt::format("'{}' failed with exit code {} (its message is above)", child.command(), code));
  const json j = parse_json(text, child.command());
  OrtReference ref;
  ref.version = j.value("ort_version", "?");
  for (const json& file : j.at("outputs_written"))
    ref.outputs.push_back(read_f32(file.get<std::string>()));
  return ref;
}

/// One ort-run.js in serve mode: loaded and warmed up once, then timed on
/// request.
class OrtServer {
public:
  OrtServer(const OrtHarness& ort, const std::string& model, const std::vector<std::string>& inputs,
            int threads, bool spin)
      : spin_(spin), child_(serve_command(ort, model, inputs, threads, spin)) {}

  /// Reads the line it prints once loaded; checks its inputs against the
  /// network's.
  void await_ready(const graph::Graph& g) {
    auto line = child_.read_line(kChildTimeoutS);
    if (!line)
      ended("before it was ready");
    ready_ = parse_json(*line, child_.command());
    const json& inputs = ready_.at("inputs");
    if (inputs.size() != g.inputs.size())
      throw BenchError(
          fmt::format("onnxruntime sees {} graph inputs, kiln {}", inputs.size(), g.inputs.size()));
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
      const auto dims = inputs[i].at("dims").get<std::vector<std::int64_t>>();
      if (dims != g.tensor(g.inputs[i]).shape)
        throw BenchError(fmt::format("input {}: onnxruntime's shape is {}, kiln's {}", i,
                                     shape_text(dims), shape_text(g.tensor(g.inputs[i]).shape)));
    }
  }

  /// The median of `repeats` timed runs after `warmup` untimed ones, in ms.
  double time(int repeats, int warmup) {
    child_.write_line(fmt::format("time {} {}", repeats, warmup));
    auto line = child_.read_line(kChildTimeoutS);
    if (!line)
      ended("while timing");
    return parse_json(*line, child_.command()).at("median_ms").get<double>();
  }

  void quit() {
    child_.write_line("quit");
    child_.close_stdin();
    if (const int code = child_.wait(30); code != 0)
      throw BenchError(fmt::format("'{}' exited with code {}", child_.command(), code));
  }

  bool spin() const { return spin_; }

private:
  /// Its output ended early: an error with its exit code (node's own
  /// message, if any, went to stderr).
  [[noreturn]] void ended(const std::string& when) {
    const int code = child_.wait(5);
    throw BenchError(fmt::format("'{}' ended {}, exit code {}", child_.command(), when, code));
  }

  static std::vector<std::string> serve_command(const OrtHarness& ort, const std::string& model,
                                                const std::vector<std::string>& inputs, int threads,
                                                bool spin) {
    std::vector<std::string> argv = ort_command(ort, model, inputs);
    argv.insert(argv.end(),
                {"--threads", std::to_string(threads), "--spin", spin ? "on" : "off", "--serve"});
    return argv;
  }

  bool spin_;
  Child child_;
  json ready_;
};

// --- the network ---

/// The schedules `kiln run MODEL --log …` picks for the host; naive without
/// logs.
std::vector<network::TaskSchedule> pick_schedules(const graph::Network& net,
                                                  const std::vector<std::string>& logs,
                                                  const Target& target) {
  if (logs.empty())
    return network::naive_schedules(net);
  record::LoadedLog log = take(record::load_logs(logs));
  for (const std::string& w : log.warnings)
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  return network::schedules_from_records(net, log.records, target);
}

/// The sum of weight x record time over the tasks that have a record.
double recorded_estimate(const graph::Network& net,
                         const std::vector<network::TaskSchedule>& schedules) {
  double sum = 0;
  for (std::size_t t = 0; t < net.tasks.size(); ++t)
    if (schedules[t].record_ms >= 0)
      sum += schedules[t].record_ms * net.tasks[t].weight();
  return sum;
}

json print_tasks(const graph::Network& net, const std::vector<network::TaskSchedule>& schedules,
                 bool have_logs) {
  const double estimate = recorded_estimate(net, schedules);
  json tasks = json::array();
  int naive = 0;
  fmt::print("{:>4}  {:<44} {:>6} {:>10} {:>6}  {}\n", "task", "key", "weight", "record ms",
             "share", "schedule");
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    const graph::Task& task = net.tasks[t];
    const network::TaskSchedule& s = schedules[t];
    const bool recorded = s.record_ms >= 0;
    const double share = recorded && estimate > 0 ? s.record_ms * task.weight() / estimate : 0;
    naive += !s.state.has_value();
    fmt::print("{:>4}  {:<44} {:>6} {:>10} {:>6}  {}\n", t, task.key, task.weight(),
               recorded ? fmt::format("{:.4f}", s.record_ms) : "-",
               recorded ? fmt::format("{:.1f}%", share * 100) : "-", s.source);
    tasks.push_back({{"key", task.key},
                     {"ops", task.ops},
                     {"weight", task.weight()},
                     {"schedule", s.source},
                     {"record_ms", recorded ? json(s.record_ms) : json(nullptr)},
                     {"share", recorded ? json(share) : json(nullptr)}});
  }
  const std::string no_log = have_logs ? "" : " (no --log)";
  if (naive == static_cast<int>(net.tasks.size()))
    fmt::print("estimate: none: every task runs its naive kernel{}\n", no_log);
  else if (naive > 0)
    fmt::print("estimate: {:.4f} ms (the sum of weight x record ms; {} of {} tasks run naive "
               "kernels{} and are not in it)\n",
               estimate, naive, net.tasks.size(), no_log);
  else
    fmt::print("estimate: {:.4f} ms (the sum of weight x record ms)\n", estimate);
  return {{"tasks", tasks}, {"estimate_ms", estimate}, {"naive_tasks", naive}};
}

// --- correctness ---

struct OutputCheck {
  std::string name;
  std::int64_t count = 0;
  double max_abs = 0, max_rel = 0, max_ref = 0;
  std::int64_t nonfinite = 0; ///< elements where only one side is NaN or ±inf
  bool passed = true;
};

/// |a - b| over the elements, b being onnxruntime's; the relative error's
/// floor keeps values near zero from dominating it.
OutputCheck compare_output(const std::string& name, const float* kiln,
                           const std::vector<float>& ort) {
  OutputCheck c{name, static_cast<std::int64_t>(ort.size())};
  for (std::size_t i = 0; i < ort.size(); ++i) {
    const double a = kiln[i], b = ort[i];
    if (!std::isfinite(a) || !std::isfinite(b)) {
      c.nonfinite += !(a == b || (std::isnan(a) && std::isnan(b)));
      continue;
    }
    const double err = std::fabs(a - b);
    c.max_abs = std::max(c.max_abs, err);
    c.max_rel = std::max(c.max_rel, err / std::max(std::fabs(b), 1e-3));
    c.max_ref = std::max(c.max_ref, std::fabs(b));
  }
  c.passed = c.nonfinite == 0 && c.max_abs <= 1e-3 * std::max(1.0, c.max_ref);
  return c;
}

/// Compares every graph output; an output count or size that differs is an
/// error.
std::vector<OutputCheck> check_outputs(const graph::Graph& g, const Buffers& kiln,
                                       const OrtReference& ort) {
  if (ort.outputs.size() != g.outputs.size())
    throw BenchError(fmt::format("onnxruntime wrote {} outputs, kiln's network has {}",
                                 ort.outputs.size(), g.outputs.size()));
  std::vector<OutputCheck> checks;
  for (std::size_t o = 0; o < g.outputs.size(); ++o) {
    const graph::TensorInfo& t = g.tensor(g.outputs[o]);
    if (static_cast<std::int64_t>(ort.outputs[o].size()) != kiln.count(o))
      throw BenchError(fmt::format("output {} ({} {}): onnxruntime wrote {} values, kiln {}", o,
                                   t.name, shape_text(t.shape), ort.outputs[o].size(),
                                   kiln.count(o)));
    checks.push_back(compare_output(t.name, kiln.at(o), ort.outputs[o]));
  }
  return checks;
}

json print_checks(const std::vector<OutputCheck>& checks, const std::string& ort_version) {
  const bool passed =
      std::all_of(checks.begin(), checks.end(), [](const OutputCheck& c) { return c.passed; });
  fmt::print(
      "check:    kiln vs onnxruntime {}: {} ({} output{}; tolerance: max abs error <= 1e-3 * "
      "max(1, max |onnxruntime|))\n",
      ort_version, passed ? "passed" : "FAILED", checks.size(), checks.size() == 1 ? "" : "s");
  json outputs = json::array();
  for (const OutputCheck& c : checks) {
    fmt::print("          {:<24} {:>9} values  max abs error {:.3g}  max rel error {:.3g}  max "
               "|ref| {:.3g}{}{}\n",
               c.name, c.count, c.max_abs, c.max_rel, c.max_ref,
               c.nonfinite ? fmt::format("  {} non-finite mismatches", c.nonfinite) : "",
               c.passed ? "" : "  FAILED");
    outputs.push_back({{"name", c.name},
                       {"values", c.count},
                       {"max_abs_error", c.max_abs},
                       {"max_rel_error", c.max_rel},
                       {"max_abs_ref", c.max_ref},
                       {"nonfinite_mismatches", c.nonfinite},
                       {"passed", c.passed}});
  }
  return {{"passed", passed}, {"ort_version", ort_version}, {"outputs", outputs}};
}

// --- timing ---

struct Figures {
  int threads = 0;
  std::vector<double> kiln, ort_on, ort_off; ///< one median per round
};

/// The median of `repeats` runs after `warmup` untimed ones, in ms.
double time_kiln(network::CompiledNetwork& net, const std::vector<const float*>& inputs,
                 const Buffers& outputs, int repeats, int warmup) {
  for (int r = 0; r < warmup; ++r)
    net.run(inputs.data(), outputs.data());
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    Stopwatch clock;
    net.run(inputs.data(), outputs.data());
    times.push_back(clock.elapsed_ms());
  }
  return median(times);
}

/// The rounds at one thread count: kiln and onnxruntime (spinning on, then
/// off) take turns, who goes first swapping each round.
Figures time_threads(const Options& o, const OrtHarness& ort, const graph::Graph& g,
                     network::CompiledNetwork& net, const std::vector<const float*>& inputs,
                     const Buffers& outputs, const std::vector<std::string>& input_files,
                     int threads) {
  Figures f{threads, {}, {}, {}};
  kiln_rt_set_num_threads(threads);
  OrtServer on(ort, o.model, input_files, threads, true);
  OrtServer off(ort, o.model, input_files, threads, false);
  on.await_ready(g);
  off.await_ready(g);
  pause_ms(o.pause_ms);
  auto kiln_turn = [&] {
    f.kiln.push_back(time_kiln(net, inputs, outputs, o.repeats, o.warmup));
    pause_ms(o.pause_ms);
  };
  auto ort_turn = [&] {
    for (OrtServer* s : {&on, &off}) {
      (s->spin() ? f.ort_on : f.ort_off).push_back(s->time(o.repeats, o.warmup));
      pause_ms(o.pause_ms);
    }
  };
  for (int r = 0; r < o.rounds; ++r) {
    if (r % 2 == 0) {
      kiln_turn();
      ort_turn();
    } else {
      ort_turn();
      kiln_turn();
    }
    fmt::print("          threads {}, round {}/{}: kiln {:.4f} ms, onnxruntime spin on {:.4f} ms, "
               "off {:.4f} ms\n",
               threads, r + 1, o.rounds, f.kiln.back(), f.ort_on.back(), f.ort_off.back());
    std::fflush(stdout);
  }
  on.quit();
  off.quit();
  return f;
}

json print_figures(const std::vector<Figures>& all) {
  fmt::print("\n{:>7}  {:>10}  {:>16}  {:>16}  {:>10}  {:>8}\n", "threads", "kiln ms",
             "ORT spin-on ms", "ORT spin-off ms", "ORT ms", "ratio");
  json rows = json::array();
  for (const Figures& f : all) {
    const double kiln = minimum(f.kiln), on = minimum(f.ort_on), off = minimum(f.ort_off);
    const double ort = std::min(on, off);
    const double ratio = kiln > 0 ? ort / kiln : 0;
    fmt::print("{:>7}  {:>10.4f}  {:>16.4f}  {:>16.4f}  {:>10.4f}  {:>7.2f}x\n", f.threads, kiln,
               on, off, ort, ratio);
    rows.push_back(
        {{"threads", f.threads},
         {"kiln_ms", kiln},
         {"ort_spin_on_ms", on},
         {"ort_spin_off_ms", off},
         {"ort_ms", ort},
         {"ort_spin", on <= off ? "on" : "off"},
         {"ratio", ratio},
         {"rounds",
          {{"kiln_ms", f.kiln}, {"ort_spin_on_ms", f.ort_on}, {"ort_spin_off_ms", f.ort_off}}}});
  }
  fmt::print("kiln and ORT: the best round's median; ORT: the better of spinning on and off; "
             "ratio: ORT ms / kiln ms (above 1: kiln is faster)\n");
  return rows;
}

void write_json(const std::string& path, const json& j) {
  if (path.empty())
    return;
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  out.close();
  if (!out)
    throw BenchError(fmt::format("cannot write '{}'", path));
  fmt::print("wrote {}\n", path);
}

// --- the run ---

/// The machine's FMA peak at each thread count, printed; as JSON, GFLOPS by
/// thread count.
json print_fma_peaks(const Target& target, const std::vector<int>& threads) {
  json peaks = json::object();
  std::string line;
  bench::FmaPeak peak;
  for (int t : threads) {
    peak = take(bench::fma_peak(target, t));
    peaks[std::to_string(t)] = peak.gflops;
    line += fmt::format("{}{:.1f} GFLOPS with {} thread{}", line.empty() ? "" : ", ", peak.gflops,
                        t, t == 1 ? "" : "s");
  }
  fmt::print("peak:     f32 FMA {} ({} chains of {} lanes)\n", line, peak.accumulators, peak.lanes);
  return peaks;
}

json target_json(const Target& t) {
  return {{"triple", t.triple},           {"cpu", t.cpu},
          {"vector_bits", t.vector_bits}, {"cores", t.cores},
          {"l1d_bytes", t.l1d_bytes},     {"l2_bytes", t.l2_bytes},
          {"l3_bytes", t.l3_bytes},       {"features", t.enabled_features()}};
}

/// Writes the seeded inputs as raw f32 files; their paths, in graph order.
std::vector<std::string> write_inputs(const graph::Graph& g, const Buffers& in,
                                      const TempDir& dir) {
  std::vector<std::string> files;
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    files.push_back(dir.file(fmt::format("in{}.f32", i)));
    write_f32(files.back(), in.at(i), in.count(i));
  }
  return files;
}

int run(const Options& o) {
  const OrtHarness ort = locate_ort(o.ort_dir);
  const Target target = codegen::host_target();
  fmt::print("kiln target\n{}", describe_target(target));
  const graph::Network net = take(graph::load_network(o.model));
  const graph::Graph& g = net.graph;
  fmt::print("model:    {} ({} nodes, {} groups, {} tasks)\n", o.model, g.nodes.size(),
             net.groups.size(), net.tasks.size());
  fmt::print("log:      {}\n", o.logs.empty()
                                   ? std::string("none: every task runs its naive schedule")
                                   : fmt::format("{}", fmt::join(o.logs, ", ")));
  json out = {
      {"target", target_json(target)}, {"model", o.model}, {"logs", o.logs}, {"seed", o.seed}};
  out["fma_peak_gflops"] = print_fma_peaks(target, o.threads);

  const std::vector<network::TaskSchedule> schedules = pick_schedules(net, o.logs, target);
  out.update(print_tasks(net, schedules, !o.logs.empty()));
  kiln_rt_set_num_threads(o.threads.front());
  auto compiled = take(network::CompiledNetwork::compile(net, schedules, target));
  fmt::print("compile:  {:.0f} ms, prepack {:.1f} ms; activations {:.2f} MB\n",
             compiled->compile_ms(), compiled->prepack_ms(),
             static_cast<double>(compiled->buffers().arena_bytes) / 1e6);
  out["compile_ms"] = compiled->compile_ms();
  out["prepack_ms"] = compiled->prepack_ms();

  Buffers in(g, g.inputs), outputs(g, g.outputs);
  const std::vector<std::vector<float>> values = network::seeded_inputs(net, o.seed);
  for (std::size_t i = 0; i < values.size(); ++i)
    std::copy(values[i].begin(), values[i].end(), in.at(i));
  const std::vector<const float*> inputs(in.data(), in.data() + in.size());
  compiled->run(inputs.data(), outputs.data());

  const TempDir dir;
  const std::vector<std::string> input_files = write_inputs(g, in, dir);
  const OrtReference ref = ort_reference(ort, o.model, input_files, dir.file("ort"));
  out["check"] = print_checks(check_outputs(g, outputs, ref), ref.version);
  if (!out["check"]["passed"].get<bool>()) {
    write_json(o.json_file, out);
    return 1;
  }

  if (o.rounds > 0) {
    fmt::print("timing:   {} round{} per thread count; a round: {} runs after {} warm-up runs of "
               "each side, medians, {:.0f} ms pauses between turns\n",
               o.rounds, o.rounds == 1 ? "" : "s", o.repeats, o.warmup, o.pause_ms);
    std::vector<Figures> all;
    for (int t : o.threads)
      all.push_back(time_threads(o, ort, g, *compiled, inputs, outputs, input_files, t));
    out["timing"] = {{"rounds", o.rounds},
                     {"repeats", o.repeats},
                     {"warmup", o.warmup},
                     {"pause_ms", o.pause_ms},
                     {"threads", print_figures(all)}};
  }
  write_json(o.json_file, out);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"kiln-network-bench: an ONNX model compiled by kiln (each task's best record in "
               "the log) against onnxruntime, outputs compared, latencies timed alternating"};
  app.add_option("model", o.model, "the model (.onnx)")->required()->check(CLI::ExistingFile);
  app.add_option("--log", o.logs,
                 "tuning log(s): each task runs its best record for this machine (none: every "
                 "task naive)")
      ->check(CLI::ExistingFile);
  app.add_option("--threads", o.threads, "thread counts, comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(1, KILN_RT_MAX_THREADS))
      ->capture_default_str();
  app.add_option("--rounds", o.rounds, "rounds per thread count (0: only the check)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--repeats", o.repeats, "timed runs of each side per round")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "untimed runs of each side before its timed runs")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--pause-ms", o.pause_ms,
                 "pause between turns, for the other side's spinning workers to sleep")
      ->check(CLI::Range(0.0, 10000.0))
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the inputs (standard normal)")->capture_default_str();
  app.add_option("--ort", o.ort_dir, "the folder of ort-run.js (kiln's bench/onnxruntime)")
      ->capture_default_str();
  app.add_option("--json", o.json_file, "also write every figure to this JSON file");
  CLI11_PARSE(app, argc, argv);
  // A node process that dies mid-conversation must be an error, not a
  // signal that kills this process before it reaps the other one.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run(o);
  } catch (const BenchError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "kiln-network-bench: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "kiln-network-bench: %s\n", e.what());
  }
  return 1;
}
