#include "kiln/measure/runner.h"

#include "kiln/codegen/jit.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::measure {

bool timed_by_checked_run(double first_seconds, double best_seconds, const RunnerOptions& options) {
  const double full_timing = first_seconds * (options.timing.repeat + 1);
  if (options.timeout_seconds > 0 && full_timing > options.timeout_seconds / 2)
    return true;
  return options.slow_cutoff_ratio > 0 && best_seconds > 0 &&
         first_seconds > options.slow_cutoff_ratio * best_seconds &&
         first_seconds >= options.timing.min_repeat_ms / 1e3;
}

namespace {

/// One trial: load, run once (checked; it also warms the caches), compare,
/// time. `best_seconds` is the best median so far, updated here.
record::MeasureResult run_trial(codegen::Jit& jit, const codegen::ObjectCode& object,
                                const ir::ComputeDAG& dag, ArgumentBuffers& buffers,
                                const Reference& reference, const RunnerOptions& options,
                                double& best_seconds) {
  Stopwatch clock;
  record::MeasureResult result;
  auto kernel = jit.load(object);
  if (!kernel) {
    result.error = record::MeasureError::CompileError;
    result.message = kernel.error().message();
    return result;
  }
  buffers.poison_outputs();
  // Packing constant inputs ahead is not part of a call: a user packs once
  // and calls many times.
  (*kernel)->prepack(buffers.pointers());
  Stopwatch first;
  (*kernel)->run(buffers.pointers());
  double first_seconds = first.elapsed_ms() / 1e3;
  CheckReport check = reference.compare(dag, buffers);
  if (!check.passed) {
    result.error = record::MeasureError::WrongAnswer;
    result.message = check.first_mismatch;
  } else if (timed_by_checked_run(first_seconds, best_seconds, options)) {
    result.costs = {first_seconds};
    result.number = 1;
  } else {
    TimingOptions timing = options.timing;
    timing.warmup = std::max(0, timing.warmup - 1); // the checked run warmed up
    Timing t = time_function([&] { (*kernel)->run(buffers.pointers()); }, timing, first_seconds);
    result.costs = t.seconds;
    result.number = t.number;
    if (best_seconds <= 0 || t.median() < best_seconds)
      best_seconds = t.median();
  }
  result.run_seconds = clock.elapsed_ms() / 1e3;
  return result;
}

class LocalRunner : public Runner {
public:
  LocalRunner(const ir::ComputeDAG& dag, const Reference& reference, const RunnerOptions& options,
              std::unique_ptr<codegen::Jit> jit)
      : dag_(dag), reference_(reference), options_(options), jit_(std::move(jit)),
        buffers_(dag, reference.seed()) {}

  record::MeasureResult run(const codegen::ObjectCode& object) override {
    return run_trial(*jit_, object, dag_, buffers_, reference_, options_, best_seconds_);
  }

private:
  ir::ComputeDAG dag_;
  const Reference& reference_;
  RunnerOptions options_;
  std::unique_ptr<codegen::Jit> jit_;
  ArgumentBuffers buffers_;
  double best_seconds_ = 0;
};

// --- the worker protocol: length-prefixed messages over two pipes ---

bool write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool read_all(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool write_string(int fd, const std::string& s) {
  std::uint64_t n = s.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, s.data(), s.size());
}

bool read_string(int fd, std::string& s) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n) || n > (1ull << 32))
    return false;
  s.resize(n);
  return read_all(fd, s.data(), n);
}

/// An object for the worker: its symbols, arguments, packed buffers, bytes.
bool write_object(int fd, const codegen::ObjectCode& object) {
  std::uint64_t head[2] = {static_cast<std::uint64_t>(object.num_args), object.packed_bytes.size()};
  std::string bytes(object.bytes.begin(), object.bytes.end());
  return write_string(fd, object.kernel) && write_string(fd, object.packed_kernel) &&
         write_string(fd, object.packed_prepack) && write_all(fd, head, sizeof head) &&
         write_all(fd, object.packed_bytes.data(),
                   object.packed_bytes.size() * sizeof(std::int64_t)) &&
         write_string(fd, bytes);
}

bool read_object(int fd, codegen::ObjectCode& object) {
  std::uint64_t head[2];
  std::string bytes;
  if (!read_string(fd, object.kernel) || !read_string(fd, object.packed_kernel) ||
      !read_string(fd, object.packed_prepack) || !read_all(fd, head, sizeof head) ||
      head[0] > 1024 || head[1] > head[0])
    return false;
  object.num_args = static_cast<int>(head[0]);
  object.packed_bytes.resize(head[1]);
  if (!read_all(fd, object.packed_bytes.data(), head[1] * sizeof(std::int64_t)) ||
      !read_string(fd, bytes))
    return false;
  object.bytes.assign(bytes.begin(), bytes.end());
  return true;
}

bool write_result(int fd, const record::MeasureResult& r) {
  std::uint32_t head[3] = {static_cast<std::uint32_t>(r.error),
                           static_cast<std::uint32_t>(r.number),
                           static_cast<std::uint32_t>(r.costs.size())};
  return write_all(fd, head, sizeof head) &&
         write_all(fd, r.costs.data(), r.costs.size() * sizeof(double)) &&
         write_all(fd, &r.run_seconds, sizeof r.run_seconds) && write_string(fd, r.message);
}

bool read_result(int fd, record::MeasureResult& r) {
  std::uint32_t head[3];
  if (!read_all(fd, head, sizeof head) || head[2] > 100000)
    return false;
  r.error = static_cast<record::MeasureError>(head[0]);
  r.number = static_cast<int>(head[1]);
  r.costs.resize(head[2]);
  return read_all(fd, r.costs.data(), r.costs.size() * sizeof(double)) &&
         read_all(fd, &r.run_seconds, sizeof r.run_seconds) && read_string(fd, r.message);
}

/// Exit codes of a worker that could not start measuring.
constexpr int kWorkerNoJit = 3;
constexpr int kWorkerNoMemory = 4;

/// The worker's loop: read a candidate, measure it, answer; exit at EOF.
[[noreturn]] void worker_main(int in, int out, const ir::ComputeDAG& dag,
                              const Reference& reference, const RunnerOptions& options) {
  // A crash must kill the worker, whatever handlers the host process (or a
  // test framework) installed: the parent reads the signal from its status.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(sig, SIG_DFL);
  auto jit = codegen::Jit::create();
  if (!jit)
    ::_exit(kWorkerNoJit);
  std::optional<ArgumentBuffers> maybe_buffers;
  try {
    maybe_buffers.emplace(dag, reference.seed());
  } catch (const UserError&) {
    ::_exit(kWorkerNoMemory);
  }
  ArgumentBuffers& buffers = *maybe_buffers;
  double best_seconds = 0;
  while (true) {
    codegen::ObjectCode object;
    if (!read_object(in, object))
      ::_exit(0);
    record::MeasureResult r =
        run_trial(**jit, object, dag, buffers, reference, options, best_seconds);
    if (!write_result(out, r))
      ::_exit(0);
  }
}

/// A running worker process and the two pipe ends that talk to it.
struct WorkerProcess {
  pid_t pid = -1;
  int to = -1, from = -1;
};

/// Forks a worker. Plain data and a free function, so that a failure (no file
/// descriptors left, no processes left) destroys no half-built runner.
Expected<WorkerProcess> start_worker(const ir::ComputeDAG& dag, const Reference& reference,
                                     const RunnerOptions& options) {
  int to_worker[2], from_worker[2];
  if (::pipe(to_worker) != 0)
    return Error("worker-error", fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  if (::pipe(from_worker) != 0) {
    ::close(to_worker[0]);
    ::close(to_worker[1]);
    return Error("worker-error", fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {to_worker[0], to_worker[1], from_worker[0], from_worker[1]})
      ::close(fd);
    return Error("worker-error",
                 fmt::format("cannot start a worker process: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(to_worker[1]);
    ::close(from_worker[0]);
    worker_main(to_worker[0], from_worker[1], dag, reference, options);
  }
  ::close(to_worker[0]);
  ::close(from_worker[1]);
  return WorkerProcess{pid, to_worker[1], from_worker[0]};
}

class IsolatedRunner : public Runner {
public:
  IsolatedRunner(const ir::ComputeDAG& dag, const Reference& reference,
                 const RunnerOptions& options, WorkerProcess worker)
      : dag_(dag), reference_(reference), options_(options), pid_(worker.pid), to_(worker.to),
        from_(worker.from) {}

  ~IsolatedRunner() override { stop_worker(); }

  record::MeasureResult run(const codegen::ObjectCode& object) override {
    record::MeasureResult result;
    if (pid_ < 0) {
      auto worker = start_worker(dag_, reference_, options_);
      if (!worker) {
        result.error = record::MeasureError::RuntimeCrash;
        result.message = worker.error().message();
        return result;
      }
      pid_ = worker->pid;
      to_ = worker->to;
      from_ = worker->from;
    }
    Stopwatch clock;
    if (!write_object(to_, object))
      return worker_died(clock);
    pollfd p{from_, POLLIN, 0};
    int timeout_ms = static_cast<int>(options_.timeout_seconds * 1000);
    int ready;
    do {
      ready = ::poll(&p, 1, timeout_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      stop_worker();
      result.error = record::MeasureError::Timeout;
      result.message =
          fmt::format("no answer within {:g} s; the worker was killed", options_.timeout_seconds);
      result.run_seconds = clock.elapsed_ms() / 1e3;
      return result;
    }
    if (!read_result(from_, result))
      return worker_died(clock);
    return result;
  }

private:
  record::MeasureResult worker_died(const Stopwatch& clock) {
    record::MeasureResult result;
    result.error = record::MeasureError::RuntimeCrash;
    int status = 0;
    ::close(to_);
    ::close(from_);
    pid_t pid = pid_;
    pid_ = -1;
    if (::waitpid(pid, &status, 0) == pid && WIFSIGNALED(status))
      result.message = fmt::format("the kernel crashed: signal {} ({})", WTERMSIG(status),
                                   strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerNoMemory)
      result.message = "the worker could not allocate the argument buffers (out of memory)";
    else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerNoJit)
      result.message = "the worker could not create its JIT";
    else
      result.message = fmt::format("the worker exited unexpectedly (status {})",
                                   WIFEXITED(status) ? WEXITSTATUS(status) : status);
    result.run_seconds = clock.elapsed_ms() / 1e3;
    return result;
  }

  void stop_worker() {
    if (pid_ < 0)
      return;
    ::kill(pid_, SIGKILL);
    ::close(to_);
    ::close(from_);
    int status;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

  ir::ComputeDAG dag_;
  const Reference& reference_;
  RunnerOptions options_;
  pid_t pid_;
  int to_, from_;
};

} // namespace

Expected<std::unique_ptr<Runner>> make_local_runner(const ir::ComputeDAG& dag,
                                                    const Reference& reference,
                                                    const RunnerOptions& options) {
  return catch_user_error([&]() -> Expected<std::unique_ptr<Runner>> {
    auto jit = codegen::Jit::create();
    if (!jit)
      return jit.error();
    return std::unique_ptr<Runner>(new LocalRunner(dag, reference, options, std::move(*jit)));
  });
}

Expected<std::unique_ptr<Runner>> make_isolated_runner(const ir::ComputeDAG& dag,
                                                       const Reference& reference,
                                                       const RunnerOptions& options) {
  // A worker that dies mid-write must not kill us with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  auto worker = start_worker(dag, reference, options);
  if (!worker)
    return worker.error();
  return std::unique_ptr<Runner>(new IsolatedRunner(dag, reference, options, *worker));
}

} // namespace kiln::measure
