// The C API (kiln/kiln.h): errors, backends and ops.
#include "c_handles.h"

#include "kiln/codegen/runtime.h"
#include "kiln/codegen/target.h"
#include "kiln/ir/parser.h"
#include "kiln/support/install_paths.h"
#include "kiln/support/version.h"

#include <fmt/format.h>

using kiln::Error;
using kiln::capi::fail;
using kiln::capi::fail_argument;
using kiln::capi::guarded;

namespace kiln::capi {

namespace {
thread_local std::string last_error;
thread_local std::string last_error_id;
} // namespace

kiln_status fail(kiln_status status, const Error& error) {
  last_error = error.render();
  last_error_id = error.id();
  return status;
}

kiln_status fail_argument(const char* message) {
  return fail(KILN_ERROR_ARGUMENT, Error("bad-argument", message));
}

void clear_error() {
  last_error.clear();
  last_error_id.clear();
}

} // namespace kiln::capi

extern "C" {

const char* kiln_last_error(void) {
  return kiln::capi::last_error.c_str();
}

const char* kiln_last_error_id(void) {
  return kiln::capi::last_error_id.c_str();
}

const char* kiln_version(void) {
  return kiln::version();
}

void kiln_set_install_prefix(const char* prefix) {
  kiln::set_install_prefix(prefix ? prefix : "");
}

void kiln_set_num_threads(int n) {
  kiln_rt_set_num_threads(n);
}

static kiln_status make_backend(kiln::Expected<std::unique_ptr<kiln::api::Backend>> made,
                                kiln_backend** out) {
  if (!made)
    return fail(KILN_ERROR_ARGUMENT, made.error());
  auto handle = std::make_unique<kiln_backend>();
  handle->impl = std::move(*made);
  *out = handle.release();
  return KILN_OK;
}

kiln_status kiln_backend_create(kiln_backend** out) {
  if (!out)
    return fail_argument("kiln_backend_create: `out` is NULL");
  *out = nullptr;
  return guarded(KILN_ERROR_INTERNAL,
                 [&] { return make_backend(kiln::api::Backend::create(), out); });
}

kiln_status kiln_backend_create_for(const char* triple, const char* cpu, kiln_backend** out) {
  if (!out || !triple || !cpu)
    return fail_argument("kiln_backend_create_for: a NULL argument");
  *out = nullptr;
  return guarded(KILN_ERROR_ARGUMENT, [&] {
    auto target = kiln::codegen::named_target(triple, cpu);
    if (!target)
      return fail(KILN_ERROR_ARGUMENT, target.error());
    return make_backend(kiln::api::Backend::create(*target), out);
  });
}

void kiln_backend_destroy(kiln_backend* backend) {
  delete backend;
}

const char* kiln_backend_cpu(const kiln_backend* backend) {
  return backend ? backend->impl->target().cpu.c_str() : "";
}

kiln_status kiln_backend_load_logs(kiln_backend* backend, const char* const* paths, size_t count) {
  if (!backend || (count && !paths))
    return fail_argument("kiln_backend_load_logs: a NULL argument");
  return guarded(KILN_ERROR_IO, [&] {
    std::vector<std::string> files;
    for (size_t i = 0; i < count; ++i) {
      if (!paths[i])
        return fail_argument("kiln_backend_load_logs: a NULL path");
      files.emplace_back(paths[i]);
    }
    if (auto err = backend->impl->load_logs(files))
      return fail(KILN_ERROR_IO, *err);
    return KILN_OK;
  });
}

size_t kiln_backend_num_records(const kiln_backend* backend) {
  return backend ? backend->impl->records().size() : 0;
}

size_t kiln_backend_num_warnings(const kiln_backend* backend) {
  return backend ? backend->impl->warnings().size() : 0;
}

const char* kiln_backend_warning(const kiln_backend* backend, size_t index) {
  if (!backend || index >= backend->impl->warnings().size())
    return "";
  return backend->impl->warnings()[index].c_str();
}

static kiln_status parse_overrides(const char* const* overrides, size_t count,
                                   kiln::ir::ParamOverrides& out) {
  if (count && !overrides)
    return fail_argument("`overrides` is NULL but `count` is not 0");
  for (size_t i = 0; i < count; ++i) {
    if (!overrides[i])
      return fail_argument("a NULL override");
    auto kv = kiln::ir::parse_override(overrides[i]);
    if (!kv)
      return fail(KILN_ERROR_PARSE, kv.error());
    out.push_back(*kv);
  }
  return KILN_OK;
}

static kiln_status make_op(kiln::Expected<kiln::ir::ComputeDAG> dag, kiln_op** out) {
  if (!dag)
    return fail(dag.error().id() == "cannot-open-file" ? KILN_ERROR_IO : KILN_ERROR_PARSE,
                dag.error());
  auto op = std::make_unique<kiln_op>();
  op->dag = std::move(*dag);
  op->workload_key = op->dag.workload_key();
  *out = op.release();
  return KILN_OK;
}

kiln_status kiln_op_parse(const char* text, const char* const* overrides, size_t count,
                          kiln_op** out) {
  if (!text || !out)
    return fail_argument("kiln_op_parse: a NULL argument");
  *out = nullptr;
  return guarded(KILN_ERROR_PARSE, [&] {
    kiln::ir::ParamOverrides sets;
    if (kiln_status s = parse_overrides(overrides, count, sets); s != KILN_OK)
      return s;
    return make_op(kiln::ir::parse_op(text, "<op text>", sets), out);
  });
}

kiln_status kiln_op_parse_file(const char* path, const char* const* overrides, size_t count,
                               kiln_op** out) {
  if (!path || !out)
    return fail_argument("kiln_op_parse_file: a NULL argument");
  *out = nullptr;
  return guarded(KILN_ERROR_PARSE, [&] {
    kiln::ir::ParamOverrides sets;
    if (kiln_status s = parse_overrides(overrides, count, sets); s != KILN_OK)
      return s;
    return make_op(kiln::ir::parse_op_file(path, sets), out);
  });
}

void kiln_op_destroy(kiln_op* op) {
  delete op;
}

const char* kiln_op_name(const kiln_op* op) {
  return op ? op->dag.name().c_str() : "";
}

const char* kiln_op_workload_key(const kiln_op* op) {
  return op ? op->workload_key.c_str() : "";
}

double kiln_op_flops(const kiln_op* op) {
  return op ? op->dag.flop_count() : 0;
}

int kiln_op_num_args(const kiln_op* op) {
  return op ? static_cast<int>(op->dag.arguments().size()) : 0;
}

static kiln_dtype c_dtype(kiln::ir::ScalarType t) {
  switch (t) {
  case kiln::ir::ScalarType::Bool:
    return KILN_BOOL;
  case kiln::ir::ScalarType::I32:
    return KILN_I32;
  case kiln::ir::ScalarType::I64:
    return KILN_I64;
  case kiln::ir::ScalarType::F32:
    return KILN_F32;
  case kiln::ir::ScalarType::F64:
    return KILN_F64;
  }
  return KILN_F32;
}

static size_t dtype_bytes(kiln_dtype t) {
  switch (t) {
  case KILN_BOOL:
    return 1;
  case KILN_I32:
  case KILN_F32:
    return 4;
  case KILN_I64:
  case KILN_F64:
    return 8;
  }
  return 4;
}

kiln_status kiln_op_arg(const kiln_op* op, int index, kiln_arg_info* out) {
  if (!op || !out)
    return fail_argument("kiln_op_arg: a NULL argument");
  const std::vector<int> args = op->dag.arguments();
  if (index < 0 || index >= static_cast<int>(args.size()))
    return fail(KILN_ERROR_ARGUMENT,
                Error("bad-argument", fmt::format("kiln_op_arg: '{}' has arguments 0 to {}, not {}",
                                                  op->dag.name(), args.size() - 1, index)));
  const kiln::ir::Stage& stage = op->dag.stage(args[index]);
  const std::vector<std::int64_t> shape = stage.shape();
  if (shape.size() > KILN_MAX_RANK)
    return fail(KILN_ERROR_ARGUMENT,
                Error("bad-argument", fmt::format("kiln_op_arg: '{}' has rank {}, more than "
                                                  "KILN_MAX_RANK ({})",
                                                  stage.name, shape.size(), KILN_MAX_RANK)));
  *out = kiln_arg_info{};
  out->name = stage.name.c_str();
  out->kind = stage.is_output     ? KILN_ARG_OUTPUT
              : stage.is_constant ? KILN_ARG_CONST_INPUT
                                  : KILN_ARG_INPUT;
  out->dtype = c_dtype(stage.dtype);
  out->rank = static_cast<int>(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    out->shape[d] = shape[d];
  out->num_elements = stage.num_elements();
  out->bytes = static_cast<size_t>(out->num_elements) * dtype_bytes(out->dtype);
  return KILN_OK;
}

} // extern "C"
