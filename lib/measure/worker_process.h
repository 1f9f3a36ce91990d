// The library's side of kiln-worker (worker.h): starting it with
// posix_spawn, talking to it with deadlines, and ending it.
#ifndef KILN_MEASURE_WORKER_PROCESS_H
#define KILN_MEASURE_WORKER_PROCESS_H

#include "kiln/support/error.h"

#include <chrono>
#include <string>
#include <string_view>
#include <sys/types.h>

namespace kiln::measure {

using Deadline = std::chrono::steady_clock::time_point;

/// `seconds` from now.
Deadline deadline_in(double seconds);

/// A running worker and this process's ends of its two pipes (non-blocking,
/// closed on exec, so that no other child of the host holds them open).
struct WorkerProcess {
  pid_t pid = -1;
  int to = -1, from = -1;
  std::string path; ///< the executable, for messages
  bool running() const { return pid > 0; }
};

/// The worker executable `configured` names, or kiln::worker_executable()
/// when it is empty; a "worker-missing" Error when it is not an executable
/// file.
Expected<std::string> find_worker(const std::string& configured);

/// Starts the worker at `path` (posix_spawn: no fork of this process, no
/// atfork handler runs) and sends it the hello frame. "worker-error" when
/// no pipe or process can be made, "worker-missing" when it cannot be
/// executed.
Expected<WorkerProcess> spawn_worker(const std::string& path);

enum class Io { Done, Closed, TimedOut };

/// One frame to the worker, or Closed when it has gone, or TimedOut when it
/// has not read it by `deadline`.
Io send_frame(const WorkerProcess& worker, std::string_view bytes, Deadline deadline);
/// One frame from the worker, as send_frame.
Io receive_frame(const WorkerProcess& worker, std::string& bytes, Deadline deadline);

/// Kills the worker (it may be running a kernel, or be stuck after a damaged
/// message), closes the pipes and waits for it. Returns its wait status: a
/// worker that had ended already keeps its own (SIGKILL does not change the
/// status of a process that is exiting).
int end_worker(WorkerProcess& worker);

/// "signal 11 (Segmentation fault)" for a status that is a signal.
std::string describe_signal(int status);

/// Why a worker at `path` ended with `status` (an exit, not a signal)
/// before its answer: "the worker could not ...".
std::string describe_exit(int status, const std::string& path);

} // namespace kiln::measure

#endif
