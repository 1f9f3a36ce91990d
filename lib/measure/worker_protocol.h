// What libkiln and kiln-worker say to each other (worker.h). Every message
// is a frame: its length (8 bytes), then its bytes. The library sends a
// hello (the protocol and kiln's version: a worker of another build exits
// with kExitMismatch), then a job (with the thread count) and its request;
// a one-shot job (Reference, Run) answers with one frame and exits, the
// Measure job answers each object with a result until the library closes
// the pipe.
#ifndef KILN_MEASURE_WORKER_PROTOCOL_H
#define KILN_MEASURE_WORKER_PROTOCOL_H

#include "kiln/codegen/compiler.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/bytes.h"
#include "kiln/measure/runner.h"
#include "kiln/record/record.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace kiln::measure::protocol {

enum class Job : std::uint8_t {
  Measure = 1,   ///< the runner's trials (runner.cpp)
  Reference = 2, ///< the naive kernel's outputs, checked (reference.cpp)
  Run = 3,       ///< `kiln run`'s call, check and timing (run.cpp)
};

/// Exit statuses of a worker that could not do its job (a crash is a
/// signal, and a finished job 0).
constexpr int kExitNoJit = 3;
constexpr int kExitNoMemory = 4;
constexpr int kExitMismatch = 5;  ///< another protocol or version of kiln
constexpr int kExitNoRequest = 6; ///< no library at the other end

/// The first frame: the protocol's number and kiln's version.
std::string hello();

/// The job frame's head: the job, then the threads this process's parallel
/// loops use (kiln_rt_num_threads), which the worker's kernels then use
/// too. A worker is a process of its own: without it, a kernel measured
/// there would run on every core whatever `--threads` said.
void put_job(ByteWriter& w, Job job);
/// The head put_job wrote.
struct JobHead {
  Job job;
  int threads; ///< for kiln_rt_set_num_threads in the worker
};
JobHead get_job(ByteReader& r);

/// The first byte of a one-shot job's answer: a value, or a UserError.
constexpr char kAnswerValue = 'V';
constexpr char kAnswerError = 'E';

/// A frame's largest size: a reference's outputs may be large, but not
/// this large (check_memory refuses such an op first).
constexpr std::uint64_t kMaxFrameBytes = std::uint64_t{1} << 40;

/// Blocking frame I/O, for the worker's side; false at the end of the
/// stream or on an error.
bool write_frame(int fd, std::string_view bytes);
bool read_frame(int fd, std::string& bytes, std::uint64_t max_bytes = kMaxFrameBytes);

/// An op as its canonical text and parameters; the worker parses it back
/// (the text round-trips, constant inputs included: ir/printer.h).
void put_dag(ByteWriter& w, const ir::ComputeDAG& dag);
ir::ComputeDAG get_dag(ByteReader& r);

void put_object(ByteWriter& w, const codegen::ObjectCode& object);
codegen::ObjectCode get_object(ByteReader& r);

void put_timing(ByteWriter& w, const TimingOptions& options);
TimingOptions get_timing(ByteReader& r);

void put_runner_options(ByteWriter& w, const RunnerOptions& options);
RunnerOptions get_runner_options(ByteReader& r);

void put_result(ByteWriter& w, const record::MeasureResult& result);
record::MeasureResult get_result(ByteReader& r);

void put_error(ByteWriter& w, const Error& error);
Error get_error(ByteReader& r);

} // namespace kiln::measure::protocol

#endif
