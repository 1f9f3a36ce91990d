// Private to export: the runtime kernels call (lib/codegen/runtime.c), built
// into kiln as bytes by cmake/EmbedRuntime.cmake.
#ifndef KILN_LIB_EXPORT_EMBEDDED_RUNTIME_H
#define KILN_LIB_EXPORT_EMBEDDED_RUNTIME_H

#include <cstddef>
#include <string_view>

namespace kiln::export_ {

/// runtime.c compiled for the machine that built kiln (position-independent,
/// optimised, without sanitizers): the archive's `kiln_runtime.o`.
std::string_view runtime_object();
/// runtime.c with runtime.h pasted in: one file that compiles on its own,
/// for a target whose object code kiln cannot build.
std::string_view runtime_source();
/// include/kiln/codegen/runtime.h, which exported headers include verbatim.
std::string_view runtime_header();

} // namespace kiln::export_

#endif // KILN_LIB_EXPORT_EMBEDDED_RUNTIME_H
