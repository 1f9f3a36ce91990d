#include "worker_call.h"

#include "worker_process.h"

#include <fmt/format.h>

#include <sys/wait.h>

namespace kiln::measure {

Expected<std::string> call_worker(const Isolation& isolation, protocol::Job job,
                                  std::string_view request, std::string_view what) {
  Deadline deadline = deadline_in(isolation.timeout_seconds);
  auto worker = spawn_worker(isolation.worker);
  if (!worker)
    return worker.error();
  ByteWriter w;
  protocol::put_job(w, job);
  w.put_string(request);
  std::string answer;
  Io io = send_frame(*worker, std::move(w).take(), deadline);
  if (io == Io::Done)
    io = receive_frame(*worker, answer, deadline);
  if (io == Io::TimedOut) {
    end_worker(*worker);
    return Error("timed-out",
                 fmt::format("{} did not finish within {:g} s and was stopped; "
                             "give it more time with {}, or make the op smaller",
                             what, isolation.timeout_seconds, isolation.timeout_option));
  }
  if (io == Io::Closed || answer.empty()) {
    std::string path = worker->path;
    int status = end_worker(*worker);
    if (WIFSIGNALED(status))
      return Error("crashed",
                   fmt::format("{} crashed: {}; if the op reads a tensor at an index computed "
                               "from data, check that the index stays inside the tensor",
                               what, describe_signal(status)));
    if (WIFEXITED(status) && WEXITSTATUS(status) == protocol::kExitMismatch)
      return Error("worker-mismatch", describe_exit(status, path));
    return Error("crashed",
                 fmt::format("{} ended without an answer: {}", what, describe_exit(status, path)));
  }
  // The answer is whole: the worker has nothing left to do but exit.
  end_worker(*worker);
  ByteReader r(std::string_view(answer).substr(1));
  if (answer[0] == protocol::kAnswerError)
    return protocol::get_error(r);
  KILN_ASSERT(answer[0] == protocol::kAnswerValue, "a worker's answer starts with its kind");
  return answer.substr(1);
}

Expected<std::string> call_with(const Isolation& isolation, protocol::Job job,
                                const std::function<std::string()>& in_worker,
                                const std::function<std::string()>& here, std::string_view what) {
  if (isolation.enabled)
    return call_worker(isolation, job, in_worker(), what);
  return catch_user_error([&]() -> Expected<std::string> { return here(); });
}

} // namespace kiln::measure
