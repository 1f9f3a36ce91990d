#include "kiln/measure/worker.h"

#include "trial.h"
#include "worker_jobs.h"
#include "worker_protocol.h"

#include "kiln/codegen/runtime.h"
#include "kiln/measure/argument_buffers.h"

#include <csignal>
#include <cstdio>
#include <functional>
#include <optional>

namespace kiln::measure {

namespace {

/// The runner's trials: the op, the options and the reference, then one
/// result for each object until the library closes the pipe. A ready frame
/// (empty) says the JIT and the buffers are made, so that the library
/// starts a candidate's timeout only once the worker can run it.
int measure_loop(int in, int out, ByteReader& setup) {
  ir::ComputeDAG dag = protocol::get_dag(setup);
  RunnerOptions options = protocol::get_runner_options(setup);
  Reference reference = Reference::read(setup);
  auto jit = codegen::Jit::create();
  if (!jit)
    return protocol::kExitNoJit;
  std::optional<ArgumentBuffers> buffers;
  try {
    buffers.emplace(dag, reference.seed());
  } catch (const UserError&) {
    return protocol::kExitNoMemory;
  }
  if (!protocol::write_frame(out, ""))
    return 0;
  double best_seconds = 0;
  std::string frame;
  while (protocol::read_frame(in, frame)) {
    ByteReader r(frame);
    codegen::ObjectCode object = protocol::get_object(r);
    record::MeasureResult result =
        run_trial(**jit, object, dag, *buffers, reference, options, best_seconds);
    ByteWriter w;
    protocol::put_result(w, result);
    if (!protocol::write_frame(out, std::move(w).take()))
      return 0;
  }
  return 0; // the library closed the pipe: no more candidates
}

/// A one-shot job's answer: its value, or the UserError it threw.
int answer(int out, const std::function<std::string()>& job) {
  std::string bytes;
  try {
    bytes = protocol::kAnswerValue + job();
  } catch (const UserError& e) {
    ByteWriter w;
    w.put(protocol::kAnswerError);
    protocol::put_error(w, e.error());
    bytes = std::move(w).take();
  }
  return protocol::write_frame(out, bytes) ? 0 : 1;
}

} // namespace

int worker_main(int in_fd, int out_fd) {
  // A crash must end the worker, whatever handlers were installed: the
  // library reads the signal from its status.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(sig, SIG_DFL);
  std::string frame;
  const std::string hello = protocol::hello();
  if (!protocol::read_frame(in_fd, frame, 1024)) {
    std::fprintf(stderr,
                 "kiln-worker: no request on descriptor %d: kiln starts this program to measure "
                 "kernels in a process of their own; it is not run by hand\n",
                 in_fd);
    return protocol::kExitNoRequest;
  }
  if (frame != hello) {
    std::fprintf(stderr,
                 "kiln-worker: the library that started me says '%s', I am '%s': point "
                 "KILN_WORKER at the kiln-worker of the library's own build\n",
                 frame.c_str(), hello.c_str());
    return protocol::kExitMismatch;
  }
  if (!protocol::read_frame(in_fd, frame))
    return 0;
  ByteReader r(frame);
  const protocol::JobHead head = protocol::get_job(r);
  kiln_rt_set_num_threads(head.threads);
  std::string body = r.get_string();
  ByteReader request(body);
  switch (head.job) {
  case protocol::Job::Measure:
    return measure_loop(in_fd, out_fd, request);
  case protocol::Job::Reference:
    return answer(out_fd, [&] { return reference_job(request); });
  case protocol::Job::Run:
    return answer(out_fd, [&] { return run_job(request); });
  }
  kiln_unreachable("a job the library does not send");
}

} // namespace kiln::measure
