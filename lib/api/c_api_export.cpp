// The C API (kiln/kiln.h): export.
#include "c_handles.h"

using kiln::capi::fail;
using kiln::capi::fail_argument;
using kiln::capi::guarded;

extern "C" {

void kiln_export_options_init(kiln_export_options* options) {
  if (!options)
    return;
  *options = kiln_export_options{};
  options->size = sizeof(kiln_export_options);
  options->name = "kiln_kernels";
}

kiln_status kiln_export(kiln_backend* backend, const kiln_op* const* ops, size_t count,
                        const kiln_export_options* options, kiln_exported** out) {
  if (out)
    *out = nullptr;
  if (!backend || (count && !ops) || !options)
    return fail_argument("kiln_export: a NULL argument");
  if (options->size != sizeof(kiln_export_options))
    return fail_argument("kiln_export: options.size is not sizeof(kiln_export_options): fill "
                         "the options with kiln_export_options_init first");
  if (!options->out_dir || !*options->out_dir)
    return fail_argument("kiln_export: options.out_dir is empty: name the folder to write");
  return guarded(KILN_ERROR_EXPORT, [&] {
    std::vector<kiln::ir::ComputeDAG> dags;
    for (size_t i = 0; i < count; ++i) {
      if (!ops[i])
        return fail_argument("kiln_export: a NULL op");
      dags.push_back(ops[i]->dag);
    }
    kiln::export_::ExportOptions export_options;
    export_options.out_dir = options->out_dir;
    if (options->name)
      export_options.name = options->name;
    export_options.shared = options->shared != 0;
    auto result =
        backend->impl->export_kernels(dags, export_options, options->allow_any_target != 0);
    if (!result)
      return fail(KILN_ERROR_EXPORT, result.error());
    if (out) {
      auto handle = std::make_unique<kiln_exported>();
      handle->result = std::move(*result);
      *out = handle.release();
    }
    return KILN_OK;
  });
}

void kiln_exported_destroy(kiln_exported* exported) {
  delete exported;
}

size_t kiln_exported_num_kernels(const kiln_exported* exported) {
  return exported ? exported->result.kernels.size() : 0;
}

const char* kiln_exported_symbol(const kiln_exported* exported, size_t index) {
  if (!exported || index >= exported->result.kernels.size())
    return "";
  return exported->result.kernels[index].symbol.c_str();
}

const char* kiln_exported_header(const kiln_exported* exported) {
  return exported ? exported->result.header.c_str() : "";
}

const char* kiln_exported_archive(const kiln_exported* exported) {
  return exported ? exported->result.archive.c_str() : "";
}

const char* kiln_exported_link_flags(const kiln_exported* exported) {
  return exported ? exported->result.link_flags.c_str() : "";
}

} // extern "C"
