// The C API (kiln/kiln.h): export.
#include "c_handles.h"

#include "kiln/graph/network.h"

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

namespace {

/// The C options as export_::ExportOptions, or the status of a bad one.
kiln_status read_options(const char* function, const kiln_export_options* options,
                         kiln::export_::ExportOptions& out) {
  if (options->size != sizeof(kiln_export_options))
    return fail_argument((std::string(function) +
                          ": options.size is not sizeof(kiln_export_options): fill "
                          "the options with kiln_export_options_init first")
                             .c_str());
  if (!options->out_dir || !*options->out_dir)
    return fail_argument(
        (std::string(function) + ": options.out_dir is empty: name the folder to write").c_str());
  out.out_dir = options->out_dir;
  if (options->name)
    out.name = options->name;
  out.shared = options->shared != 0;
  return KILN_OK;
}

kiln_status finish(kiln::Expected<kiln::export_::ExportResult> result, kiln_exported** out) {
  if (!result)
    return fail(KILN_ERROR_EXPORT, result.error());
  if (out) {
    auto handle = std::make_unique<kiln_exported>();
    handle->result = std::move(*result);
    *out = handle.release();
  }
  return KILN_OK;
}

} // namespace

kiln_status kiln_export(kiln_backend* backend, const kiln_op* const* ops, size_t count,
                        const kiln_export_options* options, kiln_exported** out) {
  if (out)
    *out = nullptr;
  if (!backend || (count && !ops) || !options)
    return fail_argument("kiln_export: a NULL argument");
  kiln::export_::ExportOptions export_options;
  if (kiln_status status = read_options("kiln_export", options, export_options))
    return status;
  return guarded(KILN_ERROR_EXPORT, [&] {
    std::vector<kiln::ir::ComputeDAG> dags;
    for (size_t i = 0; i < count; ++i) {
      if (!ops[i])
        return fail_argument("kiln_export: a NULL op");
      dags.push_back(ops[i]->dag);
    }
    return finish(
        backend->impl->export_kernels(dags, export_options, options->allow_any_target != 0), out);
  });
}

kiln_status kiln_export_model(kiln_backend* backend, const char* model_path,
                              const kiln_export_options* options, kiln_exported** out) {
  if (out)
    *out = nullptr;
  if (!backend || !model_path || !options)
    return fail_argument("kiln_export_model: a NULL argument");
  kiln::export_::ExportOptions export_options;
  if (kiln_status status = read_options("kiln_export_model", options, export_options))
    return status;
  return guarded(KILN_ERROR_EXPORT, [&] {
    auto net = kiln::graph::load_network(model_path);
    if (!net)
      return fail(net.error().id() == "cannot-open-file" ? KILN_ERROR_IO : KILN_ERROR_PARSE,
                  net.error());
    export_options.model_file = model_path;
    export_options.inputs.push_back(model_path);
    return finish(backend->impl->export_model(*net, export_options, options->allow_any_target != 0),
                  out);
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

const char* kiln_exported_model_object(const kiln_exported* exported) {
  return exported && exported->result.model ? exported->result.model->object_file.c_str() : "";
}

} // extern "C"
