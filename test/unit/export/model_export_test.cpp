// kiln export --model end to end: the tiny networks exported with random
// sketch schedules (weights packed ahead, fused groups, reshapes read
// through) are linked into a C program that calls NAME_create, NAME_run and
// NAME_destroy and nothing else, and compute numpy's outputs; NAME_run
// refuses a misaligned buffer; the program also runs for aarch64 as far as
// it can here: it compiles and its symbols are there.
#include "../graph/model_files.h"

#include "kiln/codegen/target.h"
#include "kiln/export/export.h"
#include "kiln/graph/network.h"
#include "kiln/search/search_space.h"
#include "kiln/support/version.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <unistd.h>

using namespace kiln;
namespace fs = std::filesystem;

namespace {

std::string scratch(const std::string& name) {
  fs::path dir =
      fs::temp_directory_path() / fmt::format("kiln-model-export-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

int run(const std::string& command) {
  INFO(command);
  return std::system(command.c_str());
}

/// Each task with a record of a random program of its sketch space.
std::vector<export_::ExportItem> random_items(const graph::Network& net, std::uint64_t seed) {
  const Target target = codegen::host_target();
  std::mt19937_64 rng(seed);
  std::vector<export_::ExportItem> items;
  for (const graph::Task& task : net.tasks) {
    auto space = search::make_search_space(task.dag, target, "sketch", "");
    REQUIRE(space.ok());
    export_::ExportItem item{task.dag, std::nullopt, record::TargetMatch::Exact, ""};
    for (int attempt = 0; attempt < 20 && !item.record; ++attempt) {
      auto state = (*space)->state((*space)->sample(rng));
      if (!state.ok())
        continue;
      record::Record r;
      r.run = "test/model-export";
      r.task = record::TaskInfo::from_dag(task.dag, "model_export_test");
      r.target = target;
      r.config.steps = state->steps();
      r.result.costs = {1e-5};
      r.result.number = 1;
      r.trial = attempt;
      r.kiln_version = version();
      item.record = std::move(r);
    }
    REQUIRE(item.record.has_value());
    items.push_back(std::move(item));
  }
  return items;
}

/// A C program that reads make-model's inputs, runs the model twice and
/// writes its outputs as raw f32 files; it exits 5 unless NAME_run refuses
/// a misaligned input.
std::string c_program(const std::string& name, const graph::Graph& g) {
  std::string upper = name;
  for (char& c : upper)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  std::string out = fmt::format(R"(#include "{0}.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float* buffer(long elements) {{
  float* p = aligned_alloc(64, (size_t)((elements * 4 + 63) / 64 * 64));
  if (!p)
    abort();
  return p;
}}
static void read_f32(const char* path, float* p, long elements) {{
  FILE* f = fopen(path, "rb");
  if (!f || fread(p, 4, (size_t)elements, f) != (size_t)elements)
    exit(3);
  fclose(f);
}}
static void write_f32(const char* path, const float* p, long elements) {{
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(p, 4, (size_t)elements, f) != (size_t)elements || fclose(f) != 0)
    exit(4);
}}

int main(int argc, char** argv) {{
  if (argc != 3)
    return 2;
  const char* in_dir = argv[1];
  const char* out_dir = argv[2];
  char path[4096];
  const float* inputs[{1}_NUM_INPUTS];
  float* outputs[{1}_NUM_OUTPUTS];
)",
                                name, upper);
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    out +=
        fmt::format("  {{\n    float* p = buffer({0}_INPUT{1}_ELEMENTS);\n"
                    "    snprintf(path, sizeof path, \"%s.in{1}.f32\", in_dir);\n"
                    "    read_f32(path, p, {0}_INPUT{1}_ELEMENTS);\n    inputs[{1}] = p;\n  }}\n",
                    upper, i);
  for (std::size_t o = 0; o < g.outputs.size(); ++o)
    out += fmt::format("  outputs[{1}] = buffer({0}_OUTPUT{1}_ELEMENTS);\n", upper, o);
  out += fmt::format(R"(  kiln_rt_set_num_threads(3);
  {0}_model* model = {0}_create();
  if (!model)
    return 6;
  if ({0}_run(model, inputs, outputs) != 0 || {0}_run(model, inputs, outputs) != 0)
    return 7;
  {{
    const float* shifted[{1}_NUM_INPUTS];
    memcpy(shifted, inputs, sizeof shifted);
    shifted[0] = inputs[0] + 1;
    if ({0}_run(model, shifted, outputs) != 1 || {0}_run(NULL, inputs, outputs) != 1 ||
        {0}_run(model, NULL, outputs) != 1 || {0}_run(model, inputs, NULL) != 1)
      return 5;
  }}
  {0}_destroy(model);
)",
                     name, upper);
  for (std::size_t o = 0; o < g.outputs.size(); ++o)
    out += fmt::format("  snprintf(path, sizeof path, \"%s/out{1}.f32\", out_dir);\n"
                       "  write_f32(path, outputs[{1}], {0}_OUTPUT{1}_ELEMENTS);\n",
                       upper, o);
  out += "  return 0;\n}\n";
  return out;
}

export_::ExportResult export_model(const graph::Network& net,
                                   const std::vector<export_::ExportItem>& items,
                                   const std::string& dir, const Target& target) {
  export_::ExportOptions options;
  options.out_dir = dir + "/out";
  options.name = "tinynet";
  options.target = target;
  options.network = &net;
  options.model_file = "tiny.onnx";
  auto result = export_::export_kernels(items, options);
  INFO((result.ok() ? "" : result.error().message()));
  REQUIRE(result.ok());
  return *result;
}

} // namespace

TEST_CASE("a C program running an exported model computes numpy's outputs", "[export]") {
  for (const char* m : {"tiny_resnet", "tiny_mobilenet", "tiny_bert"}) {
    INFO(m);
    auto net = graph::load_network(test::test_model(std::string(m) + ".onnx"));
    REQUIRE(net.ok());
    const std::string dir = scratch(m);
    const export_::ExportResult result =
        export_model(*net, random_items(*net, 1), dir, codegen::host_target());
    REQUIRE(result.model.has_value());
    CHECK(result.model->calls == static_cast<int>(net->groups.size()));
    // Every constant a kernel reads, once, at a 64-byte aligned offset.
    std::set<int> constants;
    for (const graph::GroupKernel& k : net->kernels)
      for (int t : k.arguments)
        if (net->graph.tensor(t).is_constant())
          constants.insert(t);
    std::int64_t weights = 0;
    for (int t : constants)
      weights += (net->graph.tensor(t).num_elements() * 4 + 63) / 64 * 64;
    CHECK(result.model->weights_bytes == weights);
    CHECK(fs::exists(dir + "/out/tinynet_model.o"));
    if (std::string(m) == "tiny_resnet") // its convs' weights are packed ahead
      CHECK(result.model->packed_bytes > 0);

    {
      std::ofstream program(dir + "/app.c");
      program << c_program("tinynet", net->graph);
    }
    REQUIRE(run(fmt::format("cc -std=c11 -Wall -Wextra -Werror -O1 -o {0}/app {0}/app.c -I{0}/out "
                            "-L{0}/out -ltinynet {1}",
                            dir, result.link_flags)) == 0);
    REQUIRE(run(fmt::format("{0}/app {1} {0}", dir, test::test_model("io/" + std::string(m)))) ==
            0);
    for (std::size_t o = 0; o < net->graph.outputs.size(); ++o) {
      const std::vector<double> got = test::read_f32(fmt::format("{}/out{}.f32", dir, o));
      const std::vector<double> want =
          test::read_f32(test::test_model(fmt::format("io/{}.out{}.f32", m, o)));
      REQUIRE(got.size() == want.size());
      REQUIRE(!want.empty());
      double worst = 0;
      for (std::size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i])));
      CHECK(worst < 1e-4);
    }
    fs::remove_all(dir);
  }
}

TEST_CASE("an exported model compiles for aarch64: its functions and weights are in the object",
          "[export]") {
  auto net = graph::load_network(test::test_model("tiny_resnet.onnx"));
  REQUIRE(net.ok());
  auto target = codegen::named_target("aarch64-linux-gnu", "neoverse-v1");
  REQUIRE(target.ok());
  const std::string dir = scratch("aarch64");
  std::vector<export_::ExportItem> items;
  for (const graph::Task& task : net->tasks)
    items.push_back({task.dag, std::nullopt, record::TargetMatch::Exact, ""});
  const export_::ExportResult result = export_model(*net, items, dir, *target);
  REQUIRE(result.model.has_value());
  CHECK(!result.runtime_source.empty());
  std::ifstream object(dir + "/out/tinynet_model.o", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(object)),
                          std::istreambuf_iterator<char>());
  CHECK(bytes.substr(0, 4) == "\x7f"
                              "ELF");
  CHECK(static_cast<unsigned char>(bytes[18]) == 183); // e_machine EM_AARCH64
  for (const char* symbol : {"tinynet_create", "tinynet_run", "tinynet_destroy"})
    CHECK(bytes.find(symbol) != std::string::npos);
  CHECK(static_cast<std::int64_t>(bytes.size()) > result.model->weights_bytes);
  fs::remove_all(dir);
}
