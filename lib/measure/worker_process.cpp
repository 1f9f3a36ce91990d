#include "worker_process.h"

#include "worker_protocol.h"

#include "kiln/measure/worker.h"
#include "kiln/support/install_paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace kiln::measure {

Deadline deadline_in(double seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(std::max(0.0, seconds)));
}

namespace {

Error missing(const std::string& path, std::string_view source, int error) {
  return Error("worker-missing",
               fmt::format("cannot run kiln's measurement worker '{}' ({}): {}; build it "
                           "(cmake --build BUILD --target kiln-worker) or install kiln (it "
                           "installs PREFIX/libexec/kiln/kiln-worker), or name it with the "
                           "environment variable KILN_WORKER (RunnerOptions::worker in the "
                           "library); --no-isolate measures in this process instead",
                           path, source, std::strerror(error)));
}

Error pipe_error(int error) {
  return Error("worker-error", fmt::format("cannot create a pipe to kiln's measurement worker: {}",
                                           std::strerror(error)));
}

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0)
      ::close(fd);
}

/// Milliseconds left until `deadline` for poll, rounded up; 0 once it passed.
int ms_left(Deadline deadline) {
  auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero())
    return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<std::int64_t>(ms, INT_MAX));
}

/// Waits until `fd` is ready for `events`; false once the deadline passed.
bool wait_ready(int fd, short events, Deadline deadline) {
  while (true) {
    int left = ms_left(deadline);
    if (left == 0)
      return false;
    pollfd p{fd, events, 0};
    int ready = ::poll(&p, 1, left);
    if (ready > 0 || (ready < 0 && errno != EINTR))
      return true; // ready, or an error that the next read or write reports
  }
}

/// SIGPIPE blocked in this thread while it writes to the worker: a worker
/// that died makes the write fail with EPIPE instead of ending the host.
/// The host's own SIGPIPE disposition stays as it was; a SIGPIPE our write
/// raised is taken back before the mask is restored.
class SigpipeBlocked {
public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_, &saved_);
  }
  ~SigpipeBlocked() {
    if (raised_) {
      timespec zero{0, 0};
      while (::sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
  }
  void raised() { raised_ = true; }

private:
  sigset_t pipe_, saved_;
  bool raised_ = false;
};

Io write_bytes(int fd, const char* p, std::size_t size, Deadline deadline) {
  SigpipeBlocked blocked;
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n > 0) {
      p += n;
      size -= static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLOUT, deadline))
        return Io::TimedOut;
    } else {
      if (n < 0 && errno == EPIPE)
        blocked.raised();
      return Io::Closed;
    }
  }
  return Io::Done;
}

Io read_bytes(int fd, char* p, std::size_t size, Deadline deadline) {
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n > 0) {
      p += n;
      size -= static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_ready(fd, POLLIN, deadline))
        return Io::TimedOut;
    } else {
      return Io::Closed;
    }
  }
  return Io::Done;
}

} // namespace

Expected<std::string> find_worker(const std::string& configured) {
  const char* env = std::getenv("KILN_WORKER");
  std::string_view source = !configured.empty()   ? "named by the measure options"
                            : env && *env != '\0' ? "named by KILN_WORKER"
                                                  : "kiln's default place for it";
  std::string path = configured.empty() ? worker_executable() : configured;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return missing(path, source, errno);
  if (!S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0)
    return missing(path, source, EACCES);
  return path;
}

Expected<WorkerProcess> spawn_worker(const std::string& configured) {
  auto path = find_worker(configured);
  if (!path)
    return path.error();
  // Every end closed on exec, so that no other child of the host holds a
  // pipe open (the worker would never see its end).
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0)
    return pipe_error(errno);
  if (::pipe2(from, O_CLOEXEC) != 0) {
    int error = errno;
    close_all({to[0], to[1]});
    return pipe_error(error);
  }
  // The worker's ends above its fixed numbers first, so that neither dup2
  // below overwrites the other's source.
  int child_in = ::fcntl(to[0], F_DUPFD_CLOEXEC, kWorkerOutFd + 1);
  int child_out = ::fcntl(from[1], F_DUPFD_CLOEXEC, kWorkerOutFd + 1);
  int dup_error = errno;
  close_all({to[0], from[1]});
  if (child_in < 0 || child_out < 0) {
    close_all({child_in, child_out, to[1], from[0]});
    return pipe_error(dup_error);
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_in, kWorkerInFd);
  posix_spawn_file_actions_adddup2(&actions, child_out, kWorkerOutFd);
  // The host's other descriptors (files, sockets) are none of the worker's.
  posix_spawn_file_actions_addclosefrom_np(&actions, kWorkerOutFd + 1);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  // The worker starts with no signal blocked and every signal at its
  // default, whatever this thread blocks or the host ignores: a crash must
  // end it, and a dead library at the other end too (SIGPIPE).
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  char* argv[] = {const_cast<char*>(path->c_str()), nullptr};
  pid_t pid = -1;
  // glibc's posix_spawn is clone(CLONE_VM | CLONE_VFORK) and exec: it copies
  // nothing of this process and runs no atfork handler, and it reports an
  // exec that failed.
  int spawned = ::posix_spawn(&pid, path->c_str(), &actions, &attributes, argv, environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close_all({child_in, child_out});
  if (spawned != 0) {
    close_all({to[1], from[0]});
    if (spawned == EAGAIN || spawned == ENOMEM)
      return Error("worker-error", fmt::format("cannot start kiln's measurement worker: {}",
                                               std::strerror(spawned)));
    return missing(*path, "it would not start", spawned);
  }
  // Non-blocking: every wait on the worker has a deadline (poll).
  for (int fd : {to[1], from[0]})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  WorkerProcess worker{pid, to[1], from[0], *path};
  // The hello is a few bytes into an empty pipe: it never waits.
  send_frame(worker, protocol::hello(), deadline_in(10));
  return worker;
}

Io send_frame(const WorkerProcess& worker, std::string_view bytes, Deadline deadline) {
  std::uint64_t n = bytes.size();
  Io io = write_bytes(worker.to, reinterpret_cast<const char*>(&n), sizeof n, deadline);
  return io == Io::Done ? write_bytes(worker.to, bytes.data(), bytes.size(), deadline) : io;
}

Io receive_frame(const WorkerProcess& worker, std::string& bytes, Deadline deadline) {
  std::uint64_t n = 0;
  Io io = read_bytes(worker.from, reinterpret_cast<char*>(&n), sizeof n, deadline);
  if (io != Io::Done)
    return io;
  if (n > protocol::kMaxFrameBytes)
    return Io::Closed;
  bytes.resize(n);
  return read_bytes(worker.from, bytes.data(), n, deadline);
}

int end_worker(WorkerProcess& worker) {
  if (!worker.running())
    return 0;
  ::kill(worker.pid, SIGKILL);
  close_all({worker.to, worker.from});
  int status = 0;
  while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
  }
  worker = WorkerProcess{};
  return status;
}

std::string describe_signal(int status) {
  return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
}

std::string describe_exit(int status, const std::string& path) {
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  switch (code) {
  case protocol::kExitNoMemory:
    return "the worker could not allocate the argument buffers (out of memory)";
  case protocol::kExitNoJit:
    return "the worker could not create its JIT";
  case protocol::kExitMismatch:
    return fmt::format("the worker '{}' is of another build of kiln than this library (its "
                       "message is on stderr); point KILN_WORKER at the kiln-worker built or "
                       "installed with this kiln",
                       path);
  default:
    return fmt::format("the worker exited unexpectedly (status {})",
                       WIFEXITED(status) ? code : status);
  }
}

} // namespace kiln::measure
