// kiln export end to end: kernels exported from a log are linked into a C
// program by the system's C compiler, with nothing but the header, the
// archive and the flags it names, and compute the interpreter's answers;
// an export for aarch64 writes the runtime's source instead; the errors.
#include "kiln/codegen/target.h"
#include "kiln/export/choose_records.h"
#include "kiln/export/export.h"
#include "kiln/ir/interpreter.h"
#include "kiln/ir/parser.h"
#include "kiln/record/tuning_log.h"
#include "kiln/schedule/transform_step.h"
#include "kiln/support/version.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

/// A fresh folder of its own for a test, under the system's temporary one.
std::string scratch(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / fmt::format("kiln-export-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

ir::ComputeDAG op(const std::string& file, const ir::ParamOverrides& params) {
  auto dag = ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + file, params);
  REQUIRE(dag.ok());
  return *dag;
}

/// A record of `dag` measured on `target` with these steps.
record::Record make_record(const ir::ComputeDAG& dag, const std::string& steps_json,
                           std::int64_t trial, double seconds, const Target& target) {
  record::Record r;
  r.run = "test/export";
  r.task = record::TaskInfo::from_dag(dag, "export_test");
  r.target = target;
  auto steps = schedule::steps_from_json(steps_json);
  REQUIRE(steps.ok());
  r.config.steps = *steps;
  r.result.costs = {seconds};
  r.result.number = 1;
  r.trial = trial;
  r.kiln_version = version();
  return r;
}

/// Two shapes of matmul (one with tails) and a conv whose weights are
/// packed ahead, each with a parallel, vectorized schedule; and a softmax,
/// whose exponentials call libm and libmvec.
std::vector<ir::ComputeDAG> test_tasks() {
  return {op("matmul.kop", {{"M", "24"}, {"N", "40"}, {"K", "16"}}),
          op("matmul.kop", {{"M", "33"}, {"N", "17"}, {"K", "9"}}),
          op("conv2d_nchw.kop", {{"C", "3"}, {"H", "10"}, {"W", "9"}, {"K", "8"}}),
          op("softmax.kop", {{"M", "5"}, {"N", "70"}})};
}

std::vector<record::Record> test_records(const std::vector<ir::ComputeDAG>& tasks,
                                         const Target& target) {
  const std::string tiled = R"([
    {"step":"split","stage":"C","iter":"i","factors":[4]},
    {"step":"split","stage":"C","iter":"j","factors":[16]},
    {"step":"reorder","stage":"C","order":["i.0","j.0","i.1","k","j.1"]},
    {"step":"vectorize","stage":"C","iter":"j.1"},
    {"step":"parallel","stage":"C","iter":"i.0"}])";
  const std::string rows = R"([
    {"step":"split","stage":"C","iter":"j","factors":[8]},
    {"step":"reorder","stage":"C","order":["i","j.0","k","j.1"]},
    {"step":"vectorize","stage":"C","iter":"j.1"},
    {"step":"parallel","stage":"C","iter":"i"}])";
  const std::string conv = R"([
    {"step":"compute_inline","stage":"padded"},
    {"step":"cache_read","stage":"kernel","reader":"conv"},
    {"step":"reorder","stage":"conv","order":["n","k","y","rc","ry","rx","x"]},
    {"step":"vectorize","stage":"conv","iter":"x"},
    {"step":"parallel","stage":"conv","iter":"k"}])";
  return {
      make_record(tasks[0], "[]", 1, 2e-5, target), make_record(tasks[0], tiled, 2, 1e-5, target),
      make_record(tasks[1], rows, 1, 1e-5, target), make_record(tasks[2], conv, 1, 1e-5, target),
      make_record(tasks[3], "[]", 1, 1e-5, target)};
}

/// The value the C program and the interpreter put at element i of input
/// `seed`: exact in float.
double input_value(std::int64_t i, int seed) {
  return static_cast<double>((i * 37 + seed * 11) % 17) / 8.0 - 1.0;
}

/// A C program calling every kernel once on seeded inputs, printing each
/// output, one element a line.
std::string c_program(const std::string& header, const export_::ExportResult& result,
                      const std::vector<ir::ComputeDAG>& dags) {
  std::string out = fmt::format(R"(#include "{}"
#include <stdio.h>
#include <stdlib.h>

static void* buffer(long bytes) {{
  void* p = aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64));
  if (!p)
    abort();
  return p;
}}
static void fill(float* p, long n, int seed) {{
  for (long i = 0; i < n; ++i)
    p[i] = (float)((double)((i * 37 + seed * 11) % 17) / 8.0 - 1.0);
}}
static void dump(FILE* f, const float* p, long n) {{
  for (long i = 0; i < n; ++i)
    fprintf(f, "%.9g\n", p[i]);
}}

int main(int argc, char** argv) {{
  if (argc != 2)
    return 2;
  FILE* out = fopen(argv[1], "w");
  if (!out)
    return 3;
  kiln_rt_set_num_threads(3);
)",
                                header);
  for (std::size_t k = 0; k < result.kernels.size(); ++k) {
    const export_::ExportedKernel& e = result.kernels[k];
    const ir::ComputeDAG& dag = dags[k];
    std::string args, dumps;
    out += "  {\n";
    const std::vector<int> arguments = dag.arguments();
    for (std::size_t a = 0; a < arguments.size(); ++a) {
      const ir::Stage& s = dag.stage(arguments[a]);
      out += fmt::format("    float* a{} = buffer({});\n", a, s.num_elements() * 4);
      if (s.is_placeholder())
        out += fmt::format("    fill(a{}, {}, {});\n", a, s.num_elements(),
                           static_cast<int>(10 * k + a));
      else
        dumps += fmt::format("    dump(out, a{}, {});\n", a, s.num_elements());
      args += fmt::format("{}a{}", args.empty() ? "" : ", ", a);
    }
    std::string upper = e.symbol;
    for (char& c : upper)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (std::size_t p = 0; p < e.packed_bytes.size(); ++p) {
      // The header's size, not the test's: the header is what a user reads.
      out += fmt::format("    void* p{} = kiln_rt_alloc({}_PACKED{}_BYTES);\n", p, upper, p);
      args += fmt::format(", p{}", p);
    }
    if (e.has_prepack)
      out += fmt::format("    {}_prepack({});\n", e.symbol, args);
    out += fmt::format("    {}({});\n", e.symbol, args);
    out += dumps + "  }\n";
  }
  out += "  return fclose(out) == 0 ? 0 : 4;\n}\n";
  return out;
}

/// The interpreter's outputs of every kernel, in the program's order.
std::vector<double> expected_outputs(const std::vector<ir::ComputeDAG>& dags) {
  std::vector<double> out;
  for (std::size_t k = 0; k < dags.size(); ++k) {
    const ir::ComputeDAG& dag = dags[k];
    std::map<std::string, std::vector<double>> inputs;
    const std::vector<int> arguments = dag.arguments();
    for (std::size_t a = 0; a < arguments.size(); ++a) {
      const ir::Stage& s = dag.stage(arguments[a]);
      if (!s.is_placeholder())
        continue;
      std::vector<double>& v = inputs[s.name];
      for (std::int64_t i = 0; i < s.num_elements(); ++i)
        v.push_back(input_value(i, static_cast<int>(10 * k + a)));
    }
    ir::Interpreter interpreter(dag, inputs);
    for (int index : arguments)
      if (!dag.stage(index).is_placeholder())
        for (double x : interpreter.evaluate(index))
          out.push_back(x);
  }
  return out;
}

int run(const std::string& command) {
  INFO(command);
  return std::system(command.c_str());
}

/// Exports the test tasks from a log written with LogWriter, for `target`.
export_::ExportResult export_tasks(const std::string& dir, const Target& target, bool strict,
                                   bool shared = false) {
  const Target host = codegen::host_target();
  const std::vector<ir::ComputeDAG> tasks = test_tasks();
  const std::string log_path = dir + "/log.jsonl";
  {
    auto writer = record::LogWriter::open(log_path);
    REQUIRE(writer.ok());
    REQUIRE(!(*writer)->append(test_records(tasks, host)));
  }
  auto log = record::load_log(log_path);
  REQUIRE(log.ok());
  auto logged = export_::tasks_of_records(log->records);
  REQUIRE(logged.ok());
  REQUIRE(logged->size() == 4);
  auto items = export_::choose_records(*logged, log->records, {target, strict, false});
  REQUIRE(items.ok());
  export_::ExportOptions options;
  options.out_dir = dir + "/out";
  options.name = "testkern";
  options.target = target;
  options.shared = shared;
  options.inputs = {log_path};
  auto result = export_::export_kernels(*items, options);
  REQUIRE(result.ok());
  return *result;
}

} // namespace

TEST_CASE("a C program linking an exported archive computes the interpreter's answers",
          "[export]") {
  const std::string dir = scratch("c-program");
  const export_::ExportResult result = export_tasks(dir, codegen::host_target(), false);
  REQUIRE(result.kernels.size() == 4);
  const std::vector<ir::ComputeDAG> dags = test_tasks();
  for (std::size_t k = 0; k < 4; ++k) {
    const export_::ExportedKernel& e = result.kernels[k];
    INFO(e.symbol);
    CHECK(e.workload_key == dags[k].workload_key());
    // kiln_<op>_ and 8 lower-case hex digits (no std::regex: GCC 12 warns
    // inside it under the sanitizers).
    const std::string prefix = "kiln_" + dags[k].name() + "_";
    CHECK(e.symbol.rfind(prefix, 0) == 0);
    CHECK(e.symbol.size() == prefix.size() + 8);
    CHECK(e.symbol.find_first_not_of("0123456789abcdef", prefix.size()) == std::string::npos);
    CHECK(e.symbol == export_::export_symbol(dags[k]));
    CHECK(e.from_record);
    CHECK(e.match == record::TargetMatch::Exact);
  }
  CHECK(result.kernels[0].trial == 2); // the faster of the first matmul's two records
  CHECK(result.kernels[0].symbol != result.kernels[1].symbol);
  CHECK(!result.kernels[0].has_prepack);
  CHECK(result.kernels[2].has_prepack); // the conv's weights, copied at the root
  CHECK(result.kernels[2].packed_bytes.size() == 1);
  CHECK(result.runtime_source.empty());
  CHECK(result.link_flags == "-lpthread -lm"); // the softmax's expf
  CHECK(fs::exists(dir + "/out/testkern.h"));
  CHECK(fs::exists(dir + "/out/libtestkern.a"));
  for (const export_::ExportedKernel& e : result.kernels)
    CHECK(fs::exists(dir + "/out/" + e.object_file));

  // A C program with nothing but the header, the archive and the header's
  // flags (strict C11, warnings as errors: the header must be clean C).
  {
    std::ofstream program(dir + "/app.c");
    program << c_program("testkern.h", result, dags);
  }
  std::ifstream header_file(result.header);
  const std::string header((std::istreambuf_iterator<char>(header_file)),
                           std::istreambuf_iterator<char>());
  CHECK(header.find("Link: cc app.c -I<dir> -L<dir> -ltestkern " + result.link_flags) !=
        std::string::npos);
  REQUIRE(run(fmt::format("cc -std=c11 -Wall -Wextra -Werror -O1 -o {0}/app {0}/app.c -I{0}/out "
                          "-L{0}/out -ltestkern {1}",
                          dir, result.link_flags)) == 0);
  REQUIRE(run(fmt::format("{0}/app {0}/outputs.txt", dir)) == 0);
  std::ifstream outputs(dir + "/outputs.txt");
  std::vector<double> got;
  for (double x; outputs >> x;)
    got.push_back(x);
  const std::vector<double> want = expected_outputs(dags);
  REQUIRE(got.size() == want.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    wrong += std::abs(got[i] - want[i]) > 1e-4 * (1 + std::abs(want[i]));
  CHECK(wrong == 0);
  fs::remove_all(dir);
}

TEST_CASE("an export links as a shared library whose kernels load", "[export]") {
  const std::string dir = scratch("shared");
  const export_::ExportResult result =
      export_tasks(dir, codegen::host_target(), false, /*shared=*/true);
  REQUIRE(!result.shared_library.empty());
  void* library = ::dlopen(result.shared_library.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO((library ? "" : ::dlerror()));
  REQUIRE(library != nullptr);
  for (const export_::ExportedKernel& e : result.kernels) {
    CHECK(::dlsym(library, e.symbol.c_str()) != nullptr);
    CHECK(::dlsym(library, (e.symbol + "_packed").c_str()) != nullptr);
  }
  CHECK(::dlsym(library, "kiln_rt_parallel_for") != nullptr);
  ::dlclose(library);
  fs::remove_all(dir);
}

TEST_CASE("an aarch64 export writes the runtime's C source, which compiles on its own",
          "[export]") {
  const std::string dir = scratch("aarch64");
  auto target = codegen::named_target("aarch64-linux-gnu", "neoverse-v1");
  REQUIRE(target.ok());
  // The log's records are of this machine: only --allow-any-target takes them.
  const std::vector<ir::ComputeDAG> tasks = test_tasks();
  const std::vector<record::Record> records = test_records(tasks, codegen::host_target());
  auto refused = export_::choose_records(tasks, records, {*target, true, false});
  REQUIRE(!refused.ok());
  CHECK(refused.error().id() == "no-record-for-target");
  auto items = export_::choose_records(tasks, records, {*target, true, true});
  REQUIRE(items.ok());
  for (const export_::ExportItem& item : *items) {
    INFO(item.dag.name() << ": " << item.note);
    CHECK(item.record.has_value());
    CHECK(item.match == record::TargetMatch::Any);
  }
  export_::ExportOptions options;
  options.out_dir = dir + "/out";
  options.name = "armkern";
  options.target = *target;
  auto result = export_::export_kernels(*items, options);
  REQUIRE(result.ok());
  REQUIRE(!result->runtime_source.empty());
  CHECK(fs::path(result->runtime_source).filename() == "kiln_runtime.c");
  // Plain C11 and POSIX: any C compiler builds it (here the host's).
  CHECK(run(fmt::format("cc -std=c11 -Wall -Wextra -Werror -O2 -c -o {0}/rt.o {1}", dir,
                        result->runtime_source)) == 0);
  // The header compiles too, without the runtime's own header beside it.
  {
    std::ofstream program(dir + "/use.c");
    program << "#include \"armkern.h\"\nint main(void) { return kiln_rt_num_threads() > 0 ? 0 : "
               "1; }\n";
  }
  CHECK(run(fmt::format("cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I{0}/out {0}/use.c",
                        dir)) == 0);
  // A shared library would need a linker for aarch64.
  options.shared = true;
  auto shared = export_::export_kernels(*items, options);
  REQUIRE(!shared.ok());
  CHECK(shared.error().id() == "shared-library");
  fs::remove_all(dir);
}

TEST_CASE("export errors: a bad name, an unwritable folder, an input in the way, no op files",
          "[export]") {
  const std::string dir = scratch("errors");
  const std::vector<ir::ComputeDAG> tasks = {test_tasks()[0]};
  auto items = export_::choose_records(tasks, {}, {codegen::host_target(), false, false});
  REQUIRE(items.ok());
  REQUIRE(items->size() == 1);
  CHECK(!(*items)[0].record.has_value()); // no record: the naive schedule, said so
  CHECK((*items)[0].note.find("naive schedule") != std::string::npos);

  export_::ExportOptions options;
  options.out_dir = dir + "/out";
  options.target = codegen::host_target();
  options.name = "my-kernels";
  auto bad_name = export_::export_kernels(*items, options);
  REQUIRE(!bad_name.ok());
  CHECK(bad_name.error().id() == "bad-export-name");

  options.name = "kernels";
  { std::ofstream file(dir + "/a-file"); }
  options.out_dir = dir + "/a-file";
  auto not_a_folder = export_::export_kernels(*items, options);
  REQUIRE(!not_a_folder.ok());
  CHECK(not_a_folder.error().id() == "cannot-write");

  options.out_dir = dir + "/a-file/below";
  auto below_a_file = export_::export_kernels(*items, options);
  REQUIRE(!below_a_file.ok());
  CHECK(below_a_file.error().id() == "cannot-write");

  // An input where the archive would go is never overwritten.
  options.out_dir = dir + "/out";
  fs::create_directories(options.out_dir);
  { std::ofstream log(options.out_dir + "/libkernels.a"); }
  options.inputs = {options.out_dir + "/libkernels.a"};
  auto over_input = export_::export_kernels(*items, options);
  REQUIRE(!over_input.ok());
  CHECK(over_input.error().id() == "output-is-input");

  fs::create_directories(dir + "/empty");
  auto no_ops = export_::tasks_of_op_folder(dir + "/empty");
  REQUIRE(!no_ops.ok());
  CHECK(no_ops.error().id() == "no-op-files");
  fs::remove_all(dir);
}

TEST_CASE("export symbols: the op name and 8 hex digits of the workload hash", "[export]") {
  const ir::ComputeDAG dag = test_tasks()[0];
  const std::string key = dag.workload_key();
  CHECK(export_::export_symbol(dag) == "kiln_matmul_" + key.substr(key.size() - 16, 8));
  CHECK(export_::export_symbol(dag, 16) == "kiln_matmul_" + key.substr(key.size() - 16));
}
