#include "kiln/export/export.h"

#include "c_header.h"
#include "embedded_runtime.h"
#include "model_export.h"
#include "shared_library.h"

#include "kiln/codegen/archive.h"
#include "kiln/codegen/compiler.h"
#include "kiln/codegen/model_program.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"
#include "kiln/support/output_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <set>

namespace kiln::export_ {

namespace fs = std::filesystem;

static bool is_c_identifier(const std::string& s) {
  return !s.empty() && c_identifier(s) == s;
}

/// Each item's symbol: 8 hex digits of its workload hash, or all 16 for
/// the items whose 8 digits collide with another task's (one in four
/// billion: a name that changes then is better than a link that fails).
static std::vector<std::string> symbols_of(const std::vector<const ExportItem*>& items) {
  std::map<std::string, int> count;
  std::vector<std::string> out;
  for (const ExportItem* item : items)
    ++count[export_symbol(item->dag)];
  for (const ExportItem* item : items) {
    std::string s = export_symbol(item->dag);
    out.push_back(count[s] > 1 ? export_symbol(item->dag, 16) : s);
  }
  return out;
}

/// "-lpthread" for the runtime, "-lm" when the kernels call anything
/// besides it (expf, libmvec's vector variants, which glibc's -lm links).
static std::string link_flags(const std::vector<std::string>& external_calls) {
  return external_calls.empty() ? "-lpthread" : "-lpthread -lm";
}

/// Whether an undefined symbol of a kernel is worth naming in the header:
/// not the runtime's, not libc's memory functions the optimiser calls.
static bool is_external_call(const std::string& symbol) {
  static const std::set<std::string> libc = {"memcpy", "memmove", "memset"};
  return symbol.rfind("kiln_rt_", 0) != 0 && !libc.count(symbol);
}

namespace {
/// The files of one export, written as they are made.
class Writer {
public:
  Writer(const ExportOptions& options, ExportResult& result) : options_(options), result_(result) {}

  /// Writes out_dir/file; returns its path.
  Expected<std::string> write(const std::string& file, std::string_view bytes,
                              const std::string& what) {
    std::string path = (fs::path(options_.out_dir) / file).string();
    if (auto err = write_output_file(path, bytes, options_.inputs, what))
      return *err;
    result_.files.push_back(path);
    return path;
  }

private:
  const ExportOptions& options_;
  ExportResult& result_;
};
} // namespace

/// The state an item runs with: its record's steps, or the naive schedule.
static Expected<schedule::State> item_state(const ExportItem& item) {
  if (!item.record)
    return schedule::State(item.dag);
  auto state = schedule::State::replay(item.dag, item.record->config.steps);
  if (!state)
    return Error(state.error().id(),
                 fmt::format("task {} ({}): trial {}'s steps do not apply: {}", item.dag.name(),
                             item.dag.workload_key(), item.record->trial, state.error().message()));
  return state;
}

static ExportedKernel describe(const ExportItem& item, const std::string& symbol,
                               const codegen::ObjectCode& object) {
  ExportedKernel k;
  k.symbol = symbol;
  k.op_name = item.dag.name();
  k.workload_key = item.dag.workload_key();
  k.object_file = symbol + ".o";
  k.has_prepack = !object.packed_prepack.empty();
  k.packed_bytes = object.packed_bytes;
  k.from_record = item.record.has_value();
  k.match = item.match;
  k.note = item.note;
  if (item.record) {
    k.trial = item.record->trial;
    k.gflops = item.record->gflops();
    k.record_cpu = item.record->target.cpu;
  } else if (k.note.empty()) {
    k.note = "naive schedule";
  }
  return k;
}

Expected<ExportResult> export_kernels(const std::vector<ExportItem>& items,
                                      const ExportOptions& options) {
  if (!is_c_identifier(options.name))
    return Error("bad-export-name",
                 fmt::format("--name '{}': the export's name names libNAME.a, NAME.h and the "
                             "header's guard, so it must be a C identifier (letters, digits and "
                             "'_', not starting with a digit), e.g. my_kernels",
                             options.name));
  std::error_code ec;
  fs::create_directories(options.out_dir, ec);
  if (ec || !fs::is_directory(options.out_dir))
    return Error("cannot-write",
                 fmt::format("cannot write the export to '{}': {}; give a folder "
                             "that can be created and written",
                             options.out_dir, ec ? ec.message() : "it is not a folder"));
  std::vector<const ExportItem*> unique;
  std::set<std::string> keys;
  for (const ExportItem& item : items)
    if (keys.insert(item.dag.workload_key()).second)
      unique.push_back(&item);
  const std::vector<std::string> symbols = symbols_of(unique);

  auto compiler = codegen::Compiler::create(options.target);
  if (!compiler)
    return compiler.error();
  ExportResult result;
  Writer writer(options, result);
  std::vector<codegen::ArchiveMember> members;
  std::vector<HeaderKernel> header_kernels;
  std::set<std::string> external;
  std::map<std::string, KernelEntry> entries; // by workload key, for a whole model
  for (std::size_t i = 0; i < unique.size(); ++i) {
    const ExportItem& item = *unique[i];
    auto state = item_state(item);
    if (!state)
      return state.error();
    auto func = catch_user_error([&] { return schedule::lower(*state); });
    if (!func)
      return Error(func.error().id(), fmt::format("task {} ({}): {}", item.dag.name(),
                                                  item.dag.workload_key(), func.error().message()));
    // The export's own symbol, set before compiling: the object code
    // defines it, and <symbol>_packed, <symbol>_prepack follow from it.
    func->name = symbols[i];
    auto object = (*compiler)->compile(*func);
    if (!object)
      return Error(object.error().id(),
                   fmt::format("task {} ({}): {}", item.dag.name(), item.dag.workload_key(),
                               object.error().message()));
    ExportedKernel kernel = describe(item, symbols[i], *object);
    auto path = writer.write(kernel.object_file,
                             std::string_view(object->bytes.data(), object->bytes.size()),
                             "the object code of " + kernel.symbol);
    if (!path)
      return path.error();
    for (const std::string& s : codegen::undefined_symbols(object->bytes))
      if (is_external_call(s))
        external.insert(s);
    entries[kernel.workload_key] = {object->packed_kernel, object->packed_prepack,
                                    object->packed_bytes};
    members.push_back({kernel.object_file, std::move(object->bytes)});
    header_kernels.push_back(
        {kernel, &item.dag, func->args, item.record ? item.record->run : std::string()});
    result.kernels.push_back(std::move(kernel));
  }

  if (options.network) {
    ExportedModel model;
    const codegen::ModelProgram program =
        model_program(*options.network, options.name, entries, model);
    auto object = codegen::compile_model_program(program, options.target);
    if (!object)
      return object.error();
    model.object_file = options.name + "_model.o";
    auto path = writer.write(model.object_file, std::string_view(object->data(), object->size()),
                             "the whole model's object code");
    if (!path)
      return path.error();
    members.push_back({model.object_file, std::move(*object)});
    result.model = model;
  }

  HeaderInfo info{options.name, options.target, "", {external.begin(), external.end()}, true, ""};
  if (result.model)
    info.model_block =
        model_header_block(*options.network, options.name, options.model_file, *result.model);
  info.link_flags = link_flags(info.external_calls);
  result.link_flags = info.link_flags;
  info.runtime_in_archive = codegen::host_object_code_fits(options.target);
  const std::string_view runtime = runtime_object();
  if (info.runtime_in_archive) {
    members.push_back({"kiln_runtime.o", std::vector<char>(runtime.begin(), runtime.end())});
  } else {
    auto path = writer.write("kiln_runtime.c", runtime_source(), "the runtime's C source");
    if (!path)
      return path.error();
    result.runtime_source = *path;
  }
  auto header = writer.write(options.name + ".h", c_header(info, header_kernels), "the C header");
  if (!header)
    return header.error();
  result.header = *header;
  const std::vector<char> archive = codegen::archive_bytes(members);
  auto archive_path =
      writer.write("lib" + options.name + ".a", std::string_view(archive.data(), archive.size()),
                   "the static archive");
  if (!archive_path)
    return archive_path.error();
  result.archive = *archive_path;

  if (options.shared) {
    if (!info.runtime_in_archive)
      return Error("shared-library",
                   fmt::format("--shared links with this machine's C compiler, which cannot link "
                               "for {}: link lib{}.a and kiln_runtime.c there instead",
                               options.target.triple, options.name));
    auto runtime_path = writer.write("kiln_runtime.o", runtime, "the runtime's object code");
    if (!runtime_path)
      return runtime_path.error();
    std::vector<std::string> objects;
    for (std::size_t i = 0; i + 1 < members.size(); ++i)
      objects.push_back((fs::path(options.out_dir) / members[i].name).string());
    objects.push_back(*runtime_path);
    const std::string so = (fs::path(options.out_dir) / ("lib" + options.name + ".so")).string();
    if (auto err = check_output_file(so, options.inputs, "the shared library"))
      return *err;
    if (auto err = link_shared_library(so, objects, info.link_flags))
      return *err;
    result.files.push_back(so);
    result.shared_library = so;
  }
  return result;
}

} // namespace kiln::export_
