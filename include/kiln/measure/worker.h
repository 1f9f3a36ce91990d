// kiln's measurement worker: the program (kiln-worker) that loads and runs
// candidate kernels, which may crash or hang, away from the process that
// tunes. libkiln starts it with posix_spawn, never with a bare fork: the
// host may be a multithreaded compiler, and a forked copy of it would
// inherit locks that its other threads held (malloc's, LLVM's, the host's
// own) and never see them released. The worker starts from exec with one
// thread and receives everything it needs over two pipes: the op as its
// canonical text, the options, the reference outputs, then objects.
#ifndef KILN_MEASURE_WORKER_H
#define KILN_MEASURE_WORKER_H

namespace kiln::measure {

/// The worker's ends of the pipes: it reads requests from kWorkerInFd and
/// writes answers to kWorkerOutFd (its stdin and stdout stay the host's,
/// so nothing a kernel or a library prints can corrupt an answer).
constexpr int kWorkerInFd = 3;
constexpr int kWorkerOutFd = 4;

/// The body of kiln-worker: serves one job (the runner's loop of trials,
/// the reference computation, or `kiln run`'s kernel call) and returns the
/// process's exit status.
int worker_main(int in_fd, int out_fd);

} // namespace kiln::measure

#endif
