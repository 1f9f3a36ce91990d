#include "kiln/measure/isolated_call.h"

#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kiln::measure {

namespace {

constexpr char kValue = 'V';
constexpr char kUserError = 'E';

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

[[noreturn]] void child_main(int out, const std::function<std::string()>& fn) {
  // A crash must end the child, whatever handlers the host installed: the
  // parent reads the signal from its status.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    std::signal(sig, SIG_DFL);
  std::string answer;
  try {
    answer = kValue + fn();
  } catch (const UserError& e) {
    ByteWriter w;
    w.put(kUserError);
    w.put_string(e.error().id());
    w.put_string(e.error().message());
    const SourceLocation& at = e.error().location();
    w.put_string(at.file);
    w.put(at.line);
    w.put(at.column);
    w.put_string(at.line_text);
    answer = std::move(w).take();
  }
  ::_exit(write_all(out, answer) ? 0 : 1);
}

Error user_error_from(std::string_view bytes) {
  ByteReader r(bytes);
  std::string id = r.get_string();
  std::string message = r.get_string();
  SourceLocation at;
  at.file = r.get_string();
  at.line = r.get<int>();
  at.column = r.get<int>();
  at.line_text = r.get_string();
  return Error(std::move(id), std::move(message), std::move(at));
}

} // namespace

Expected<std::string> call_isolated(const std::function<std::string()>& fn, double timeout_seconds,
                                    std::string_view what, std::string_view timeout_option) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0)
    return Error("worker-error",
                 fmt::format("cannot create a pipe for {}: {}", what, std::strerror(errno)));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return Error("worker-error",
                 fmt::format("cannot start a process for {}: {}", what, std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    child_main(pipe_fds[1], fn);
  }
  ::close(pipe_fds[1]);
  const int in = pipe_fds[0];

  Stopwatch clock;
  std::string answer;
  bool timed_out = false;
  char buffer[1 << 16];
  while (true) {
    double left_ms = timeout_seconds * 1000 - clock.elapsed_ms();
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{in, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(std::min(left_ms + 1, 2e9)));
    if (ready < 0 && errno == EINTR)
      continue;
    if (ready == 0)
      continue; // the loop head sees the deadline
    ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break; // end of the answer (or the child died)
    answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(in);
  if (timed_out)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out)
    return Error("timed-out", fmt::format("{} did not finish within {:g} s and was stopped; "
                                          "give it more time with {}, or make the op smaller",
                                          what, timeout_seconds, timeout_option));
  if (WIFSIGNALED(status))
    return Error("crashed",
                 fmt::format("{} crashed: signal {} ({}); if the op reads a tensor at an index "
                             "computed from data, check that the index stays inside the tensor",
                             what, WTERMSIG(status), strsignal(WTERMSIG(status))));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || answer.empty())
    return Error("crashed", fmt::format("{} ended without an answer (exit status {})", what,
                                        WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  if (answer[0] == kUserError)
    return user_error_from(std::string_view(answer).substr(1));
  KILN_ASSERT(answer[0] == kValue, "a damaged isolated answer");
  return answer.substr(1);
}

Expected<std::string> call_with(const Isolation& isolation, const std::function<std::string()>& fn,
                                std::string_view what) {
  if (isolation.enabled)
    return call_isolated(fn, isolation.timeout_seconds, what, isolation.timeout_option);
  return catch_user_error([&]() -> Expected<std::string> { return fn(); });
}

} // namespace kiln::measure
