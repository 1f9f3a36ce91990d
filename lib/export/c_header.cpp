#include "c_header.h"

#include "embedded_runtime.h"

#include "kiln/export/choose_records.h"
#include "kiln/support/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace kiln::export_ {

static constexpr std::array<std::string_view, 44> kCKeywords = {
    "auto",     "break",  "case",     "char",     "const",      "continue", "default",  "do",
    "double",   "else",   "enum",     "extern",   "float",      "for",      "goto",     "if",
    "inline",   "int",    "long",     "register", "restrict",   "return",   "short",    "signed",
    "sizeof",   "static", "struct",   "switch",   "typedef",    "union",    "unsigned", "void",
    "volatile", "while",  "_Bool",    "_Complex", "_Imaginary", "bool",     "class",    "new",
    "delete",   "this",   "template", "operator"};

std::string c_identifier(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  // C++ keywords too: the header is included from C++ as well.
  if (std::find(kCKeywords.begin(), kCKeywords.end(), out) != kCKeywords.end())
    out += "_";
  return out;
}

static std::string c_type(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::Bool:
    return "uint8_t";
  case ir::ScalarType::I32:
    return "int32_t";
  case ir::ScalarType::I64:
    return "int64_t";
  case ir::ScalarType::F32:
    return "float";
  case ir::ScalarType::F64:
    return "double";
  }
  kiln_unreachable("unknown scalar type");
}

std::string upper(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

namespace {
/// One argument as the header declares it.
struct Arg {
  std::string name; ///< a C identifier, unique within the kernel
  std::string type; ///< element type
  std::string role; ///< "input", "const input", "output", "packed"
  std::string dims; ///< "[64][32]"
  std::int64_t bytes = 0;
};
} // namespace

static std::vector<Arg> header_args(const HeaderKernel& k) {
  const std::vector<int> dag_args = k.dag->arguments();
  std::vector<Arg> out;
  std::set<std::string> used;
  for (std::size_t i = 0; i < k.args.size(); ++i) {
    const schedule::Buffer& b = k.args[i];
    Arg a;
    a.name = c_identifier(b.name);
    if (!used.insert(a.name).second)
      a.name += fmt::format("_{}", i);
    used.insert(a.name);
    a.type = c_type(b.dtype);
    if (i < dag_args.size()) {
      const ir::Stage& s = k.dag->stage(dag_args[i]);
      a.role = s.is_placeholder() ? (s.is_constant ? "const input" : "input") : "output";
    } else {
      KILN_ASSERT(b.scope == schedule::BufferScope::Packed, "arguments past the DAG's are packed");
      a.role = "packed";
    }
    for (std::int64_t d : b.shape)
      a.dims += fmt::format("[{}]", d);
    a.bytes = b.size_bytes();
    out.push_back(std::move(a));
  }
  return out;
}

/// The parameter list; `prepack` makes packed buffers writable and leaves
/// the rest as in the kernel.
static std::string parameters(const std::vector<Arg>& args, bool prepack) {
  std::string out;
  for (const Arg& a : args) {
    const bool written = a.role == "output" || (prepack && a.role == "packed");
    out +=
        fmt::format("{}{}{}* {}", out.empty() ? "" : ", ", written ? "" : "const ", a.type, a.name);
  }
  return out;
}

static std::string schedule_line(const HeaderKernel& k) {
  const ExportedKernel& e = k.info;
  if (!e.from_record)
    return " * schedule: " + e.note + "\n";
  std::string line =
      fmt::format(" * schedule: trial {} of run \"{}\", {:.2f} GFLOPS on {} ({})\n", e.trial, k.run,
                  e.gflops, e.record_cpu, record::target_match_name(e.match));
  return line;
}

static std::string kernel_block(const HeaderKernel& k) {
  const ExportedKernel& e = k.info;
  const std::vector<Arg> args = header_args(k);
  const std::string macro = upper(e.symbol);
  std::string params_text;
  for (const ir::Param& p : k.dag->params())
    params_text += fmt::format("{}{}={}", params_text.empty() ? "" : " ", p.name, p.value);
  std::string out = fmt::format(
      "/* ---- {} ----\n * op {}{}, workload {}, {:.0f} FLOPs a call\n", e.symbol, e.op_name,
      params_text.empty() ? "" : " (" + params_text + ")", e.workload_key, k.dag->flop_count());
  out += schedule_line(k);
  out += " * arguments (row-major; each 64-byte aligned, none overlapping another):\n";
  std::size_t width = 4;
  for (const Arg& a : args)
    width = std::max(width, a.name.size());
  for (std::size_t i = 0; i < args.size(); ++i)
    out += fmt::format(" *   {:>2}  {:<{}}  {:<11}  {}{}  ({} bytes)\n", i, args[i].name, width,
                       args[i].role, args[i].type, args[i].dims, args[i].bytes);
  std::vector<const Arg*> packed;
  for (const Arg& a : args)
    if (a.role == "packed")
      packed.push_back(&a);
  if (!packed.empty())
    out += fmt::format(" * Packed buffers: allocate each (64-byte aligned, e.g. kiln_rt_alloc)\n"
                       " * with {}_PACKED<i>_BYTES bytes; call\n"
                       " * {}_prepack once the constant inputs are set\n"
                       " * (again when they change), then pass the same buffers to every call.\n"
                       " * Prepack writes only them and the kernel only reads them: one packed\n"
                       " * set may serve calls on several threads.\n",
                       macro, e.symbol);
  out += " */\n";
  out += fmt::format("#define {}_NUM_ARGS {}\n", macro, args.size());
  if (!packed.empty()) {
    out += fmt::format("#define {}_NUM_PACKED {}\n", macro, packed.size());
    for (std::size_t i = 0; i < packed.size(); ++i)
      out += fmt::format("#define {}_PACKED{}_BYTES {} /* {} */\n", macro, i, packed[i]->bytes,
                         packed[i]->name);
    out += fmt::format("void {}_prepack({});\n", e.symbol, parameters(args, true));
    out += fmt::format("void {}_prepack_packed(void** args); /* the same pointers, in an array "
                       "*/\n",
                       e.symbol);
  }
  out += fmt::format("void {}({});\n", e.symbol, parameters(args, false));
  out += fmt::format("void {}_packed(void** args); /* the same pointers, in an array */\n\n",
                     e.symbol);
  return out;
}

std::string c_header(const HeaderInfo& info, const std::vector<HeaderKernel>& kernels) {
  const std::string guard = upper(info.name) + "_H";
  std::string calls;
  for (const std::string& s : info.external_calls)
    calls += (calls.empty() ? "" : ", ") + s;
  std::string out = fmt::format(
      "/* {name}.h: {count} kernel{s} exported by kiln {version} (`kiln export`) for\n"
      " * {triple}, CPU {cpu}. Generated: do not edit.\n"
      " *\n"
      " * Link: cc app.c -I<dir> -L<dir> -l{name} {flags}\n"
      "{runtime}"
      "{calls}"
      "{model}"
      " *\n"
      " * Every kernel is a C function (kiln's docs/kernel-abi.md and docs/library.md):\n"
      " *  - one pointer per tensor: the inputs in the op's order, then the outputs,\n"
      " *    then the packed buffers, if the kernel has any;\n"
      " *  - tensors are dense and row-major, of the element type shown;\n"
      " *  - every pointer MUST be 64-byte aligned and MUST NOT overlap another\n"
      " *    (the code is compiled assuming both);\n"
      " *  - the kernel writes every element of its outputs and never reads them.\n"
      " * Kernels with parallel loops run them on the runtime's thread pool below\n"
      " * (kiln_rt_set_num_threads; default: every core). Kernels may be called from\n"
      " * several threads; their parallel loops then take turns.\n"
      " */\n"
      "#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n\n",
      fmt::arg("name", info.name), fmt::arg("count", kernels.size()),
      fmt::arg("s", kernels.size() == 1 ? "" : "s"), fmt::arg("version", version()),
      fmt::arg("triple", info.target.triple), fmt::arg("cpu", info.target.cpu),
      fmt::arg("flags", info.link_flags),
      fmt::arg("runtime",
               info.runtime_in_archive
                   ? " * The archive holds the runtime (kiln_rt_*): link one copy of it.\n"
                   : " * The runtime (kiln_rt_*) is NOT in the archive: compile kiln_runtime.c,\n"
                     " * next to this header, for the target and link it too.\n"),
      fmt::arg("calls",
               calls.empty()
                   ? std::string()
                   : fmt::format(
                         " * The kernels call {}{}.\n", calls,
                         std::any_of(info.external_calls.begin(), info.external_calls.end(),
                                     [](const std::string& s) { return s.rfind("_ZGV", 0) == 0; })
                             ? " (_ZGV*: glibc's libmvec, which -lm links on "
                               "glibc; add -lmvec where it does not)"
                             : "")),
      fmt::arg("model", info.model_block.empty()
                            ? std::string()
                            : fmt::format(" * {0}_create, {0}_run and {0}_destroy (at the end) run "
                                          "the whole model.\n",
                                          info.name)),
      fmt::arg("guard", guard));
  out += "/* The runtime: threads and aligned buffers. */\n";
  out += runtime_header();
  out += "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (const HeaderKernel& k : kernels)
    out += kernel_block(k);
  out += info.model_block;
  out += fmt::format("#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {} */\n", guard);
  return out;
}

} // namespace kiln::export_
