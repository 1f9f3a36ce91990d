// The C API's handles and its error plumbing, shared by its source files.
#ifndef KILN_LIB_API_C_HANDLES_H
#define KILN_LIB_API_C_HANDLES_H

#include "kiln/api/backend.h"
#include "kiln/kiln.h"

#include <memory>
#include <new>
#include <string>

struct kiln_backend {
  std::unique_ptr<kiln::api::Backend> impl;
  std::string best_description; ///< kiln_best::description of the last lookup
};

struct kiln_op {
  kiln::ir::ComputeDAG dag;
  std::string workload_key;
};

struct kiln_exported {
  kiln::export_::ExportResult result;
};

struct kiln_kernel {
  std::unique_ptr<kiln::api::Kernel> impl;
};

namespace kiln::capi {

/// Records `error` as the thread's last error; returns `status`.
kiln_status fail(kiln_status status, const Error& error);
kiln_status fail_argument(const char* message);
void clear_error();

/// Runs `body` (returning a kiln_status) with the thread's last error
/// cleared; a UserError becomes `on_error`, anything else thrown an
/// internal error: nothing unwinds into C.
template <typename Body> kiln_status guarded(kiln_status on_error, Body&& body) {
  try {
    clear_error();
    return body();
  } catch (const UserError& e) {
    return fail(on_error, e.error());
  } catch (const std::bad_alloc&) {
    return fail(on_error, Error("out-of-memory", "out of memory"));
  } catch (const std::exception& e) {
    return fail(KILN_ERROR_INTERNAL, Error("internal-error", e.what()));
  } catch (...) {
    return fail(KILN_ERROR_INTERNAL, Error("internal-error", "an unknown exception"));
  }
}

} // namespace kiln::capi

#endif // KILN_LIB_API_C_HANDLES_H
