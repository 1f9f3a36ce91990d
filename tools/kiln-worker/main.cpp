// kiln-worker: the process kiln measures kernels in (include/kiln/measure/
// worker.h). libkiln starts it with posix_spawn and talks to it over the
// descriptors kWorkerInFd and kWorkerOutFd; it is not run by hand.
#include "kiln/measure/worker.h"

#include <cstdio>
#include <unistd.h>

int main() {
  int status = kiln::measure::worker_main(kiln::measure::kWorkerInFd, kiln::measure::kWorkerOutFd);
  // No static destructors: the JIT's and LLVM's teardown would only cost
  // time, and a kernel may have left the runtime's pool threads running.
  std::fflush(stderr);
  ::_exit(status);
}
