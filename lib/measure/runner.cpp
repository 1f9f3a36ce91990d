#include "kiln/measure/runner.h"

#include "trial.h"
#include "worker_process.h"
#include "worker_protocol.h"

#include "kiln/codegen/jit.h"
#include "kiln/measure/argument_buffers.h"
#include "kiln/measure/bytes.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <sys/wait.h>

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

/// The worker's first request: the op, the options and the reference. The
/// reference is sent, not computed again in the worker: one computation
/// (the interpreter may take seconds), and every worker after a crash
/// checks against the very same outputs.
std::string measure_setup(const ir::ComputeDAG& dag, const Reference& reference,
                          const RunnerOptions& options) {
  ByteWriter body;
  protocol::put_dag(body, dag);
  protocol::put_runner_options(body, options);
  reference.write(body);
  ByteWriter w;
  protocol::put_job(w, protocol::Job::Measure);
  w.put_string(std::move(body).take());
  return std::move(w).take();
}

/// The longest a worker may take to start (exec, its setup, its JIT and
/// argument buffers) before its first candidate's timeout starts: large
/// ops take seconds to fill their buffers.
constexpr double kStartSeconds = 120;

class IsolatedRunner : public Runner {
public:
  IsolatedRunner(const ir::ComputeDAG& dag, const Reference& reference,
                 const RunnerOptions& options, WorkerProcess worker)
      : dag_(dag), reference_(reference), options_(options), worker_(std::move(worker)) {}

  ~IsolatedRunner() override { end_worker(worker_); }

  record::MeasureResult run(const codegen::ObjectCode& object) override {
    record::MeasureResult result;
    Stopwatch clock;
    if (!worker_.running()) {
      auto worker = spawn_worker(options_.worker);
      if (!worker) {
        result.error = record::MeasureError::RuntimeCrash;
        result.message = worker.error().message();
        return result;
      }
      worker_ = std::move(*worker);
      ready_ = false;
    }
    if (!ready_) {
      std::string ready;
      Deadline start = deadline_in(std::max(kStartSeconds, options_.timeout_seconds));
      Io io = send_frame(worker_, measure_setup(dag_, reference_, options_), start);
      if (io == Io::Done)
        io = receive_frame(worker_, ready, start);
      if (io == Io::TimedOut)
        return timed_out(clock, fmt::format("the worker did not start within {:g} s; it was "
                                            "killed",
                                            std::max(kStartSeconds, options_.timeout_seconds)));
      if (io == Io::Closed)
        return worker_died(clock);
      ready_ = true;
      clock = Stopwatch();
    }
    ByteWriter w;
    protocol::put_object(w, object);
    std::string answer;
    Deadline deadline = deadline_in(options_.timeout_seconds);
    Io io = send_frame(worker_, std::move(w).take(), deadline);
    if (io == Io::Done)
      io = receive_frame(worker_, answer, deadline);
    if (io == Io::TimedOut)
      return timed_out(clock, fmt::format("no answer within {:g} s; the worker was killed",
                                          options_.timeout_seconds));
    if (io == Io::Closed)
      return worker_died(clock);
    ByteReader r(answer);
    return protocol::get_result(r);
  }

private:
  record::MeasureResult timed_out(const Stopwatch& clock, std::string message) {
    end_worker(worker_);
    record::MeasureResult result;
    result.error = record::MeasureError::Timeout;
    result.message = std::move(message);
    result.run_seconds = clock.elapsed_ms() / 1e3;
    return result;
  }

  record::MeasureResult worker_died(const Stopwatch& clock) {
    record::MeasureResult result;
    result.error = record::MeasureError::RuntimeCrash;
    std::string path = worker_.path;
    int status = end_worker(worker_);
    result.message = WIFSIGNALED(status)
                         ? fmt::format("the kernel crashed: {}", describe_signal(status))
                         : describe_exit(status, path);
    result.run_seconds = clock.elapsed_ms() / 1e3;
    return result;
  }

  ir::ComputeDAG dag_;
  const Reference& reference_;
  RunnerOptions options_;
  WorkerProcess worker_;
  bool ready_ = false; ///< the worker has its setup and said it is ready
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
  // Started now, so that a worker that cannot start is this call's Error;
  // it receives its setup with the first candidate.
  auto worker = spawn_worker(options.worker);
  if (!worker)
    return worker.error();
  return std::unique_ptr<Runner>(new IsolatedRunner(dag, reference, options, std::move(*worker)));
}

} // namespace kiln::measure
