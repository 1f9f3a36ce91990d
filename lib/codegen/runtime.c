/* The runtime generated kernels call (include/kiln/codegen/runtime.h), in
 * C11 with pthreads: the JIT links this very code by address, and `kiln
 * export` bundles its object code (or, for another architecture, this
 * source) with exported kernels, so a C program that links an exported
 * archive needs nothing but -lpthread. */
#define _POSIX_C_SOURCE 200809L

#include "kiln/codegen/runtime.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

void* kiln_rt_alloc(int64_t bytes) {
  /* aligned_alloc needs a size that is a multiple of the alignment. */
  size_t size = ((size_t)bytes + 63) / 64 * 64;
  void* p = aligned_alloc(64, size ? size : 64);
  if (!p) {
    fprintf(stderr, "kiln: out of memory allocating %lld bytes for an intermediate buffer\n",
            (long long)bytes);
    abort();
  }
  return p;
}

void kiln_rt_free(void* ptr) {
  free(ptr);
}

/* How long an idle worker polls for the next job before it sleeps. Waking a
 * sleeping thread through the condition variable costs tens of
 * microseconds on a VM, as much as a small kernel; a tuner or a network runs
 * kernels back to back, so the next job usually comes well within this. */
#define KILN_RT_WORKER_SPIN_NS 100000

/* Tells the core a spin-wait loop is running (frees the sibling hyperthread,
 * saves power) without giving up the time slice. */
static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ volatile("yield");
#else
  sched_yield();
#endif
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* True on a thread that is running an iteration of a parallel loop. */
static _Thread_local bool in_parallel_loop = false;

struct job {
  kiln_task_fn fn;
  void* closure;
  int64_t n;
  uint32_t chunks;
};

/* A persistent pool. One job at a time: a generation number tags the job,
 * and chunks are claimed with a compare-and-swap on (generation, next
 * chunk), so a worker that wakes late can never run a chunk of a later job
 * with an earlier job's function. */
struct pool {
  int requested;
  int threads; /* the workers started, plus the caller */
  pthread_t* workers;
  pthread_mutex_t run_mutex; /* one job at a time */
  pthread_mutex_t mutex;     /* guards stop, generation and the job */
  pthread_cond_t wake, done;
  bool stop;
  atomic_bool stopping; /* stop, for workers that spin without the mutex */
  uint64_t generation;
  struct job job;
  _Atomic uint64_t claim; /* generation << 32 | next chunk */
  _Atomic uint32_t remaining;
};

/* Claims and runs chunks of job `generation` until none is left. */
static void work(struct pool* p, const struct job* job, uint64_t generation) {
  for (;;) {
    uint64_t state = atomic_load_explicit(&p->claim, memory_order_acquire);
    if ((state >> 32) != generation || (state & 0xffffffffu) >= job->chunks)
      return;
    if (!atomic_compare_exchange_weak_explicit(&p->claim, &state, state + 1, memory_order_acq_rel,
                                               memory_order_acquire))
      continue;
    uint32_t chunk = (uint32_t)(state & 0xffffffffu);
    int64_t begin = job->n * chunk / job->chunks;
    int64_t end = job->n * (chunk + 1) / job->chunks;
    in_parallel_loop = true;
    for (int64_t i = begin; i < end; ++i)
      job->fn(i, job->closure);
    in_parallel_loop = false;
    if (atomic_fetch_sub_explicit(&p->remaining, 1, memory_order_acq_rel) == 1) {
      pthread_mutex_lock(&p->mutex);
      pthread_cond_broadcast(&p->done);
      pthread_mutex_unlock(&p->mutex);
    }
  }
}

/* Polls, for up to KILN_RT_WORKER_SPIN_NS, until a job later than `seen` is
 * published (its generation is the high half of claim) or the pool stops;
 * the caller then takes the job under the mutex as usual. */
static void spin_for_job(struct pool* p, uint64_t seen) {
  const int64_t deadline = now_ns() + KILN_RT_WORKER_SPIN_NS;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if ((atomic_load_explicit(&p->claim, memory_order_acquire) >> 32) != seen ||
          atomic_load_explicit(&p->stopping, memory_order_relaxed))
        return;
      cpu_relax();
    }
    if (now_ns() >= deadline)
      return;
  }
}

static void* worker_loop(void* arg) {
  struct pool* p = arg;
  uint64_t seen = 0;
  for (;;) {
    spin_for_job(p, seen);
    pthread_mutex_lock(&p->mutex);
    while (!p->stop && p->generation == seen)
      pthread_cond_wait(&p->wake, &p->mutex);
    if (p->stop) {
      pthread_mutex_unlock(&p->mutex);
      return NULL;
    }
    uint64_t generation = seen = p->generation;
    struct job job = p->job;
    pthread_mutex_unlock(&p->mutex);
    work(p, &job, generation);
  }
}

/* Starts threads - 1 workers, or as many as the system allows: a pool with
 * fewer threads is slower, never wrong, and this is reached from generated
 * code, which has no way to report an error. Returns NULL only when even
 * the pool itself cannot be allocated. */
static struct pool* pool_create(int threads) {
  struct pool* p = calloc(1, sizeof *p);
  if (!p)
    return NULL;
  p->requested = threads;
  p->workers = calloc((size_t)threads, sizeof *p->workers);
  pthread_mutex_init(&p->run_mutex, NULL);
  pthread_mutex_init(&p->mutex, NULL);
  pthread_cond_init(&p->wake, NULL);
  pthread_cond_init(&p->done, NULL);
  atomic_init(&p->stopping, false);
  atomic_init(&p->claim, 0);
  atomic_init(&p->remaining, 0);
  int started = 0;
  for (int i = 1; p->workers && i < threads; ++i) {
    if (pthread_create(&p->workers[started], NULL, worker_loop, p) != 0)
      break;
    ++started;
  }
  p->threads = started + 1;
  return p;
}

static void pool_destroy(struct pool* p) {
  pthread_mutex_lock(&p->mutex);
  p->stop = true;
  pthread_mutex_unlock(&p->mutex);
  atomic_store_explicit(&p->stopping, true, memory_order_relaxed);
  pthread_cond_broadcast(&p->wake);
  for (int i = 0; i + 1 < p->threads; ++i)
    pthread_join(p->workers[i], NULL);
  pthread_cond_destroy(&p->done);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->mutex);
  pthread_mutex_destroy(&p->run_mutex);
  free(p->workers);
  free(p);
}

static void pool_run(struct pool* p, int64_t n, kiln_task_fn fn, void* closure) {
  /* One job at a time: kernels launched from two threads take turns. */
  pthread_mutex_lock(&p->run_mutex);
  struct job job = {fn, closure, n, (uint32_t)(n < p->threads ? n : p->threads)};
  pthread_mutex_lock(&p->mutex);
  uint64_t generation = ++p->generation;
  p->job = job;
  atomic_store_explicit(&p->remaining, job.chunks, memory_order_relaxed);
  atomic_store_explicit(&p->claim, generation << 32, memory_order_release);
  pthread_mutex_unlock(&p->mutex);
  pthread_cond_broadcast(&p->wake);
  work(p, &job, generation);
  /* Spin briefly (kernels are short), then sleep until the last chunk ends. */
  for (int spin = 0; spin < 20000 && atomic_load_explicit(&p->remaining, memory_order_acquire) != 0;
       ++spin)
    sched_yield();
  pthread_mutex_lock(&p->mutex);
  while (atomic_load_explicit(&p->remaining, memory_order_acquire) != 0)
    pthread_cond_wait(&p->done, &p->mutex);
  pthread_mutex_unlock(&p->mutex);
  pthread_mutex_unlock(&p->run_mutex);
}

static pthread_mutex_t pool_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct pool* the_pool_ptr = NULL;
static int requested_threads = 0;

/* The online cores, asked once (under pool_mutex): sysconf reads a file
 * under /sys, a few system calls that would cost as much as a small kernel
 * if every parallel loop paid them. */
static int default_threads(void) {
  static int cached = 0;
  if (cached == 0) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cached = n > 0 ? (int)(n < KILN_RT_MAX_THREADS ? n : KILN_RT_MAX_THREADS) : 1;
  }
  return cached;
}

/* A forked child has none of the parent's threads: it must not use the
 * parent's pool (it would wait forever), so it forgets it (without freeing:
 * its mutexes may be held by threads the child does not have) and makes its
 * own. kiln itself never forks (its measurement worker is spawned), but a
 * host that links it may. */
static void forget_pool_in_child(void) {
  the_pool_ptr = NULL;
}

static void register_at_fork(void) {
  pthread_atfork(NULL, NULL, forget_pool_in_child);
}

/* The pool for the current thread count, or NULL when none can be made (the
 * caller then runs the loop serially). */
static struct pool* the_pool(void) {
  static pthread_once_t at_fork = PTHREAD_ONCE_INIT;
  pthread_once(&at_fork, register_at_fork);
  pthread_mutex_lock(&pool_mutex);
  int want = requested_threads > 0 ? requested_threads : default_threads();
  if (!the_pool_ptr || the_pool_ptr->requested != want) {
    if (the_pool_ptr)
      pool_destroy(the_pool_ptr);
    the_pool_ptr = pool_create(want);
  }
  struct pool* p = the_pool_ptr;
  pthread_mutex_unlock(&pool_mutex);
  return p;
}

void kiln_rt_parallel_for(int64_t n, kiln_task_fn fn, void* closure) {
  if (n <= 0)
    return;
  struct pool* p = in_parallel_loop || n == 1 ? NULL : the_pool();
  if (!p || p->threads == 1) {
    for (int64_t i = 0; i < n; ++i)
      fn(i, closure);
    return;
  }
  pool_run(p, n, fn, closure);
}

void kiln_rt_set_num_threads(int n) {
  pthread_mutex_lock(&pool_mutex);
  requested_threads = n > 0 ? (n < KILN_RT_MAX_THREADS ? n : KILN_RT_MAX_THREADS) : 0;
  pthread_mutex_unlock(&pool_mutex);
}

int kiln_rt_num_threads(void) {
  pthread_mutex_lock(&pool_mutex);
  int n = requested_threads > 0 ? requested_threads : default_threads();
  pthread_mutex_unlock(&pool_mutex);
  return n;
}
