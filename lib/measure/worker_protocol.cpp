#include "worker_protocol.h"

#include "kiln/codegen/runtime.h"
#include "kiln/ir/parser.h"
#include "kiln/support/version.h"

#include <fmt/format.h>

#include <cerrno>
#include <unistd.h>

namespace kiln::measure::protocol {

/// Raised whenever a message changes shape.
constexpr int kProtocolVersion = 2;

std::string hello() {
  return fmt::format("kiln-worker protocol {} kiln {}", kProtocolVersion, version());
}

void put_job(ByteWriter& w, Job job) {
  w.put(job);
  w.put(static_cast<std::int32_t>(kiln_rt_num_threads()));
}

JobHead get_job(ByteReader& r) {
  auto job = r.get<Job>();
  return {job, r.get<std::int32_t>()};
}

namespace {

bool write_all(int fd, const char* p, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, char* p, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

} // namespace

bool write_frame(int fd, std::string_view bytes) {
  std::uint64_t n = bytes.size();
  return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) &&
         write_all(fd, bytes.data(), bytes.size());
}

bool read_frame(int fd, std::string& bytes, std::uint64_t max_bytes) {
  std::uint64_t n = 0;
  if (!read_all(fd, reinterpret_cast<char*>(&n), sizeof n) || n > max_bytes)
    return false;
  bytes.resize(n);
  return read_all(fd, bytes.data(), n);
}

void put_dag(ByteWriter& w, const ir::ComputeDAG& dag) {
  w.put_string(dag.to_string());
  w.put_string(dag.workload_key());
  w.put<std::uint64_t>(dag.params().size());
  for (const ir::Param& p : dag.params()) {
    w.put_string(p.name);
    w.put(p.value);
  }
}

ir::ComputeDAG get_dag(ByteReader& r) {
  std::string text = r.get_string();
  std::string key = r.get_string();
  std::vector<ir::Param> params(r.get<std::uint64_t>());
  for (ir::Param& p : params) {
    p.name = r.get_string();
    p.value = r.get<std::int64_t>();
  }
  auto parsed = ir::parse_op(text, "the op sent to kiln-worker");
  KILN_ASSERT(parsed.ok(), "the canonical text of an op parses: " +
                               (parsed.ok() ? std::string() : parsed.error().render()));
  // The canonical text carries shapes, not parameters: put them back.
  ir::ComputeDAG dag(parsed->name(), parsed->stages(), std::move(params));
  KILN_ASSERT(dag.workload_key() == key, "an op's canonical text round-trips to the same op");
  return dag;
}

void put_object(ByteWriter& w, const codegen::ObjectCode& object) {
  w.put_string(object.kernel);
  w.put_string(object.packed_kernel);
  w.put_string(object.packed_prepack);
  w.put<std::int32_t>(object.num_args);
  w.put<std::uint64_t>(object.packed_bytes.size());
  for (std::int64_t b : object.packed_bytes)
    w.put(b);
  w.put_string(std::string_view(object.bytes.data(), object.bytes.size()));
}

codegen::ObjectCode get_object(ByteReader& r) {
  codegen::ObjectCode object;
  object.kernel = r.get_string();
  object.packed_kernel = r.get_string();
  object.packed_prepack = r.get_string();
  object.num_args = r.get<std::int32_t>();
  object.packed_bytes.resize(r.get<std::uint64_t>());
  for (std::int64_t& b : object.packed_bytes)
    b = r.get<std::int64_t>();
  std::string bytes = r.get_string();
  object.bytes.assign(bytes.begin(), bytes.end());
  return object;
}

void put_timing(ByteWriter& w, const TimingOptions& o) {
  w.put<std::int32_t>(o.warmup);
  w.put<std::int32_t>(o.repeat);
  w.put(o.min_repeat_ms);
  w.put(o.flush_cache);
}

TimingOptions get_timing(ByteReader& r) {
  TimingOptions o;
  o.warmup = r.get<std::int32_t>();
  o.repeat = r.get<std::int32_t>();
  o.min_repeat_ms = r.get<double>();
  o.flush_cache = r.get<bool>();
  return o;
}

void put_runner_options(ByteWriter& w, const RunnerOptions& o) {
  put_timing(w, o.timing);
  w.put(o.timeout_seconds);
  w.put(o.slow_cutoff_ratio);
}

RunnerOptions get_runner_options(ByteReader& r) {
  RunnerOptions o;
  o.timing = get_timing(r);
  o.timeout_seconds = r.get<double>();
  o.slow_cutoff_ratio = r.get<double>();
  return o;
}

void put_result(ByteWriter& w, const record::MeasureResult& result) {
  w.put<std::uint32_t>(static_cast<std::uint32_t>(result.error));
  w.put_string(result.message);
  w.put_doubles(result.costs);
  w.put<std::int32_t>(result.number);
  w.put(result.run_seconds);
}

record::MeasureResult get_result(ByteReader& r) {
  record::MeasureResult result;
  result.error = static_cast<record::MeasureError>(r.get<std::uint32_t>());
  result.message = r.get_string();
  result.costs = r.get_doubles();
  result.number = r.get<std::int32_t>();
  result.run_seconds = r.get<double>();
  return result;
}

void put_error(ByteWriter& w, const Error& error) {
  w.put_string(error.id());
  w.put_string(error.message());
  const SourceLocation& at = error.location();
  w.put_string(at.file);
  w.put<std::int32_t>(at.line);
  w.put<std::int32_t>(at.column);
  w.put_string(at.line_text);
}

Error get_error(ByteReader& r) {
  std::string id = r.get_string();
  std::string message = r.get_string();
  SourceLocation at;
  at.file = r.get_string();
  at.line = r.get<std::int32_t>();
  at.column = r.get<std::int32_t>();
  at.line_text = r.get_string();
  return Error(std::move(id), std::move(message), std::move(at));
}

} // namespace kiln::measure::protocol
