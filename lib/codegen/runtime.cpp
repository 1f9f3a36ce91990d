#include "kiln/codegen/runtime.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <system_error>
#include <thread>
#include <vector>

extern "C" void* kiln_rt_alloc(std::int64_t bytes) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  std::size_t size = (static_cast<std::size_t>(bytes) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size ? size : 64);
  if (!p) {
    std::fprintf(stderr, "kiln: out of memory allocating %lld bytes for an intermediate buffer\n",
                 static_cast<long long>(bytes));
    std::abort();
  }
  return p;
}

extern "C" void kiln_rt_free(void* ptr) {
  std::free(ptr);
}

namespace {

/// How long an idle worker polls for the next job before it sleeps. Waking a
/// sleeping thread through the condition variable costs tens of
/// microseconds on a VM, as much as a small kernel; a tuner or a network runs
/// kernels back to back, so the next job usually comes well within this.
constexpr std::chrono::microseconds kWorkerSpin{100};

/// Tells the core a spin-wait loop is running (frees the sibling hyperthread,
/// saves power) without giving up the time slice.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#else
  std::this_thread::yield();
#endif
}

/// True on a thread that is running an iteration of a parallel loop.
thread_local bool in_parallel_loop = false;

/// A persistent pool. One job at a time: a generation number tags the job,
/// and chunks are claimed with a compare-and-swap on (generation, next
/// chunk), so a worker that wakes late can never run a chunk of a later job
/// with an earlier job's function.
class ThreadPool {
public:
  /// Starts threads - 1 workers, or as many as the system allows: a pool
  /// with fewer threads is slower, never wrong, and this is reached from
  /// JIT-compiled code, which no exception may unwind through.
  explicit ThreadPool(int threads) : requested_(threads) {
    for (int i = 1; i < threads; ++i) {
      try {
        workers_.emplace_back([this] { worker_loop(); });
      } catch (const std::system_error&) {
        break;
      }
    }
    threads_ = static_cast<int>(workers_.size()) + 1;
  }

  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    stopping_.store(true, std::memory_order_relaxed);
    wake_.notify_all();
    for (std::thread& t : workers_)
      t.join();
  }

  int threads() const { return threads_; }
  int requested() const { return requested_; }

  void run(std::int64_t n, kiln_task_fn fn, void* closure) {
    // One job at a time: kernels launched from two threads take turns.
    std::lock_guard<std::mutex> one_job(run_mutex_);
    Job job{fn, closure, n, static_cast<std::uint32_t>(std::min<std::int64_t>(n, threads_))};
    std::uint64_t generation;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      generation = ++generation_;
      job_ = job;
      remaining_.store(job.chunks, std::memory_order_relaxed);
      claim_.store(generation << 32, std::memory_order_release);
    }
    wake_.notify_all();
    work(job, generation);
    // Spin briefly (kernels are short), then sleep until the last chunk ends.
    for (int spin = 0; spin < 20000 && remaining_.load(std::memory_order_acquire) != 0; ++spin)
      std::this_thread::yield();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return remaining_.load(std::memory_order_acquire) == 0; });
  }

private:
  struct Job {
    kiln_task_fn fn = nullptr;
    void* closure = nullptr;
    std::int64_t n = 0;
    std::uint32_t chunks = 0;
  };

  void worker_loop() {
    std::uint64_t seen = 0;
    while (true) {
      Job job;
      std::uint64_t generation;
      spin_for_job(seen);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_)
          return;
        generation = seen = generation_;
        job = job_;
      }
      work(job, generation);
    }
  }

  /// Polls, for up to kWorkerSpin, until a job later than `seen` is
  /// published (its generation is the high half of claim_) or the pool
  /// stops; the caller then takes the job under the mutex as usual.
  void spin_for_job(std::uint64_t seen) const {
    const auto deadline = std::chrono::steady_clock::now() + kWorkerSpin;
    while (true) {
      for (int i = 0; i < 64; ++i) {
        if ((claim_.load(std::memory_order_acquire) >> 32) != seen ||
            stopping_.load(std::memory_order_relaxed))
          return;
        cpu_relax();
      }
      if (std::chrono::steady_clock::now() >= deadline)
        return;
    }
  }

  /// Claims and runs chunks of job `generation` until none is left.
  void work(const Job& job, std::uint64_t generation) {
    while (true) {
      std::uint64_t state = claim_.load(std::memory_order_acquire);
      if ((state >> 32) != generation || (state & 0xffffffffu) >= job.chunks)
        return;
      if (!claim_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel))
        continue;
      std::uint32_t chunk = static_cast<std::uint32_t>(state & 0xffffffffu);
      std::int64_t begin = job.n * chunk / job.chunks;
      std::int64_t end = job.n * (chunk + 1) / job.chunks;
      in_parallel_loop = true;
      for (std::int64_t i = begin; i < end; ++i)
        job.fn(i, job.closure);
      in_parallel_loop = false;
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);
        done_.notify_all();
      }
    }
  }

  const int requested_;
  int threads_ = 1;
  std::vector<std::thread> workers_;
  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  std::atomic<bool> stopping_{false}; ///< stop_, for workers that spin without the mutex
  std::uint64_t generation_ = 0;
  Job job_;
  std::atomic<std::uint64_t> claim_{0};
  std::atomic<std::uint32_t> remaining_{0};
};

std::mutex pool_mutex;
std::unique_ptr<ThreadPool> pool;
int requested_threads = 0;

int default_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

/// A forked child has none of the parent's threads: it must not use the
/// parent's pool (it would wait forever), so it forgets it and makes its own.
/// kiln itself never forks (its measurement worker is spawned), but a host
/// that links it may.
void forget_pool_in_child() {
  (void)pool.release();
}

ThreadPool& the_pool() {
  static std::once_flag at_fork;
  std::call_once(at_fork, [] { ::pthread_atfork(nullptr, nullptr, &forget_pool_in_child); });
  std::lock_guard<std::mutex> lock(pool_mutex);
  int want = requested_threads > 0 ? requested_threads : default_threads();
  if (!pool || pool->requested() != want)
    pool = std::make_unique<ThreadPool>(want);
  return *pool;
}

} // namespace

extern "C" void kiln_rt_parallel_for(std::int64_t n, kiln_task_fn fn, void* closure) {
  if (n <= 0)
    return;
  if (in_parallel_loop || n == 1) {
    for (std::int64_t i = 0; i < n; ++i)
      fn(i, closure);
    return;
  }
  ThreadPool& p = the_pool();
  if (p.threads() == 1) {
    for (std::int64_t i = 0; i < n; ++i)
      fn(i, closure);
    return;
  }
  p.run(n, fn, closure);
}

extern "C" void kiln_rt_set_num_threads(int n) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  requested_threads = n > 0 ? std::min(n, KILN_RT_MAX_THREADS) : 0;
}

extern "C" int kiln_rt_num_threads(void) {
  std::lock_guard<std::mutex> lock(pool_mutex);
  return requested_threads > 0 ? requested_threads : default_threads();
}

namespace kiln::codegen {

std::vector<std::pair<std::string, void*>> runtime_symbols() {
  return {
      {"kiln_rt_alloc", reinterpret_cast<void*>(&kiln_rt_alloc)},
      {"kiln_rt_free", reinterpret_cast<void*>(&kiln_rt_free)},
      {"kiln_rt_parallel_for", reinterpret_cast<void*>(&kiln_rt_parallel_for)},
      {"kiln_rt_num_threads", reinterpret_cast<void*>(&kiln_rt_num_threads)},
  };
}

} // namespace kiln::codegen
