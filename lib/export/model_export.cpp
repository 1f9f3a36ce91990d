#include "model_export.h"

#include "c_header.h"

#include "kiln/network/network_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>

namespace kiln::export_ {

namespace fs = std::filesystem;

static constexpr std::int64_t kAlignment = 64;

static std::int64_t round_up(std::int64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

codegen::ModelProgram model_program(const graph::Network& net, const std::string& name,
                                    const std::map<std::string, KernelEntry>& by_key,
                                    ExportedModel& model) {
  const graph::Graph& g = net.graph;
  const network::NetworkBinding binding = network::bind_network(net);
  codegen::ModelProgram program;
  program.name = name;

  // The weights, each constant once at a 64-byte aligned offset.
  std::map<int, std::int64_t> weight_at;
  for (int tensor : binding.constants) {
    const graph::TensorInfo& t = g.tensor(tensor);
    const auto at = static_cast<std::int64_t>(program.weights.size());
    weight_at[tensor] = at;
    const std::int64_t bytes = t.num_elements() * 4;
    program.weights.resize(static_cast<std::size_t>(round_up(at + bytes)), 0);
    std::memcpy(program.weights.data() + at, t.data->data(), static_cast<std::size_t>(bytes));
  }

  // The state block: the activations' arena, then each group's packed
  // buffers (groups of one task pack different weights).
  std::int64_t state = round_up(binding.plan.arena_bytes);
  auto place = [&](const network::ArgumentPlace& p) {
    switch (p.kind) {
    case network::ArgumentPlace::Arena:
      return codegen::ProgramPointer{codegen::ProgramPointer::State, p.offset, 0};
    case network::ArgumentPlace::Constant:
      return codegen::ProgramPointer{codegen::ProgramPointer::Weights, weight_at.at(p.index), 0};
    case network::ArgumentPlace::Input:
      return codegen::ProgramPointer{codegen::ProgramPointer::Input, 0, p.index};
    case network::ArgumentPlace::Output:
      return codegen::ProgramPointer{codegen::ProgramPointer::Output, 0, p.index};
    }
    kiln_unreachable("unknown argument place");
  };
  for (std::size_t k = 0; k < net.groups.size(); ++k) {
    const graph::Task& task = net.tasks[static_cast<std::size_t>(net.task_of_group[k])];
    auto entry = by_key.find(task.key);
    KILN_ASSERT(entry != by_key.end(), "a network export holds every task: " + task.key);
    codegen::ProgramCall call{entry->second.packed_kernel, entry->second.packed_prepack, {}};
    for (const network::ArgumentPlace& p : binding.groups[k])
      call.args.push_back(place(p));
    for (std::int64_t bytes : entry->second.packed_bytes) {
      call.args.push_back({codegen::ProgramPointer::State, state, 0});
      state += round_up(bytes);
      model.packed_bytes += round_up(bytes);
    }
    program.calls.push_back(std::move(call));
  }
  program.state_bytes = state;
  for (int i : g.inputs)
    program.input_bytes.push_back(g.tensor(i).num_elements() * 4);
  for (int o : g.outputs)
    program.output_bytes.push_back(g.tensor(o).num_elements() * 4);
  for (const network::OutputCopy& copy : binding.output_copies)
    program.copies.push_back({place(copy.from), copy.output, copy.bytes});

  model.calls = static_cast<int>(program.calls.size());
  model.weights_bytes = static_cast<std::int64_t>(program.weights.size());
  model.activation_bytes = binding.plan.arena_bytes;
  return program;
}

/// A tensor's name as C comment text: printable, without a comment's end.
static std::string comment_text(const std::string& s) {
  std::string out;
  for (char c : s)
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  for (std::size_t at; (at = out.find("*/")) != std::string::npos;)
    out.replace(at, 2, "* /");
  return out;
}

static std::string megabytes(std::int64_t bytes) {
  return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
}

std::string model_header_block(const graph::Network& net, const std::string& name,
                               const std::string& model_file, const ExportedModel& model) {
  const graph::Graph& g = net.graph;
  auto tensor_lines = [&](const std::vector<int>& tensors) {
    std::string out;
    std::size_t width = 4;
    for (int t : tensors)
      width = std::max(width, comment_text(g.tensor(t).name).size());
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const graph::TensorInfo& t = g.tensor(tensors[i]);
      std::string dims;
      for (std::int64_t d : t.shape)
        dims += fmt::format("[{}]", d);
      out += fmt::format(" *   {:>2}  {:<{}}  float{}  ({} bytes)\n", i, comment_text(t.name),
                         width, dims, t.num_elements() * 4);
    }
    return out;
  };
  const std::string macro = upper(name);
  std::string out = fmt::format(
      "/* ---- the whole model{} ----\n"
      " * {name}_create allocates the model's state in one block (activations {act},\n"
      " * packed weights {packed}) and packs the weights into it; it returns NULL when\n"
      " * memory is short. The weights themselves ({weights}) are read-only data in the\n"
      " * archive. {name}_run runs the model: {calls} kernel calls, in order; it returns 0,\n"
      " * or 1 without running anything when the model, an array or a buffer is NULL or\n"
      " * a buffer is not 64-byte aligned. {name}_destroy frees the state (NULL is fine).\n"
      " * inputs (row-major; each 64-byte aligned, none overlapping another buffer):\n"
      "{inputs}"
      " * outputs (every element written):\n"
      "{outputs}"
      " * One model runs one call at a time: its activations live in its state. Create\n"
      " * one per thread to run several at once. The kernels' parallel loops run on the\n"
      " * runtime's threads (kiln_rt_set_num_threads).\n"
      " */\n",
      model_file.empty() ? "" : ", " + comment_text(fs::path(model_file).filename().string()),
      fmt::arg("name", name), fmt::arg("act", megabytes(model.activation_bytes)),
      fmt::arg("packed", megabytes(model.packed_bytes)),
      fmt::arg("weights", megabytes(model.weights_bytes)), fmt::arg("calls", model.calls),
      fmt::arg("inputs", tensor_lines(g.inputs)), fmt::arg("outputs", tensor_lines(g.outputs)));
  out += fmt::format("#define {}_NUM_INPUTS {}\n#define {}_NUM_OUTPUTS {}\n", macro,
                     g.inputs.size(), macro, g.outputs.size());
  for (std::size_t i = 0; i < g.inputs.size(); ++i)
    out += fmt::format("#define {}_INPUT{}_ELEMENTS {}\n", macro, i,
                       g.tensor(g.inputs[i]).num_elements());
  for (std::size_t o = 0; o < g.outputs.size(); ++o)
    out += fmt::format("#define {}_OUTPUT{}_ELEMENTS {}\n", macro, o,
                       g.tensor(g.outputs[o]).num_elements());
  out += fmt::format("typedef struct {0}_model {0}_model;\n"
                     "{0}_model* {0}_create(void);\n"
                     "int {0}_run({0}_model* model, const float* const* inputs, "
                     "float* const* outputs);\n"
                     "void {0}_destroy({0}_model* model);\n\n",
                     name);
  return out;
}

} // namespace kiln::export_
