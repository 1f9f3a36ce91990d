#include "kiln/network/compiled_network.h"

#include "kiln/codegen/compiler.h"
#include "kiln/measure/nearest_pick.h"
#include "kiln/network/network_binding.h"
#include "kiln/record/history.h"
#include "kiln/schedule/lower.h"
#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

namespace kiln::network {

std::vector<TaskSchedule> naive_schedules(const graph::Network& net) {
  return std::vector<TaskSchedule>(net.tasks.size(), TaskSchedule{std::nullopt, "naive", -1});
}

std::vector<TaskSchedule> schedules_from_records(const graph::Network& net,
                                                 const std::vector<record::Record>& records,
                                                 const Target& target,
                                                 const measure::MeasureOptions* nearest) {
  std::vector<TaskSchedule> out;
  for (const graph::Task& task : net.tasks) {
    record::TargetMatch match{};
    const record::Record* best = record::history_best(records, task.key, target, &match);
    TaskSchedule s{std::nullopt, "naive (no record)", -1};
    if (!best && nearest) {
      std::string why;
      auto pick = measure::pick_nearest_shape(records, task.dag, target, *nearest,
                                              measure::kNearestCandidates, &why);
      if (pick && *pick) {
        auto state = schedule::State::replay(task.dag, (*pick)->record.config.steps);
        KILN_ASSERT(state.ok(), "a nearest-shape pick replays: it was built from these steps");
        s.state = std::move(*state);
        s.source = (*pick)->description;
        s.record_ms = (*pick)->record.result.median() * 1e3;
      } else {
        s.source = fmt::format("naive (no record; no nearest shape: {})",
                               pick ? why : pick.error().message());
      }
    }
    if (best && best->config.program()) {
      auto state = schedule::State::replay(task.dag, best->config.steps);
      if (state.ok()) {
        s.state = std::move(*state);
        s.source = fmt::format("log: trial {} ({})", best->trial, record::target_match_name(match));
        s.record_ms = best->result.median() * 1e3;
      } else {
        s.source = fmt::format("naive (trial {}'s steps do not apply: {})", best->trial,
                               state.error().message());
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

static void* aligned_bytes(std::int64_t bytes) {
  const auto size = static_cast<std::size_t>(std::max<std::int64_t>((bytes + 63) / 64 * 64, 64));
  void* p = std::aligned_alloc(64, size);
  KILN_ASSERT(p != nullptr, "out of memory for a network's buffers");
  std::memset(p, 0, size);
  return p;
}

CompiledNetwork::~CompiledNetwork() {
  kernels_.clear(); // before the JIT they live in
}

Expected<std::unique_ptr<CompiledNetwork>>
CompiledNetwork::compile(const graph::Network& net, const std::vector<TaskSchedule>& schedules,
                         const Target& target) {
  KILN_ASSERT(schedules.size() == net.tasks.size(), "one schedule per task");
  std::unique_ptr<CompiledNetwork> cn(new CompiledNetwork());
  cn->net_ = &net;
  auto jit = codegen::Jit::create();
  if (!jit)
    return jit.error();
  cn->jit_ = std::move(*jit);
  auto compiler = codegen::Compiler::create(target);
  if (!compiler)
    return compiler.error();

  const graph::Graph& g = net.graph;
  const NetworkBinding binding = bind_network(net);
  cn->plan_ = binding.plan;
  cn->arena_.reset(aligned_bytes(cn->plan_.arena_bytes));
  std::map<int, void*> constant_at;
  for (int tensor : binding.constants) {
    const graph::TensorInfo& t = g.tensor(tensor);
    void* p = aligned_bytes(t.num_elements() * 4);
    std::memcpy(p, t.data->data(), t.data->size() * sizeof(float));
    cn->constants_.emplace_back(p);
    constant_at[tensor] = p;
  }
  auto slot_of = [&](const ArgumentPlace& place) {
    switch (place.kind) {
    case ArgumentPlace::Arena:
      return Slot{Slot::Fixed, static_cast<char*>(cn->arena_.get()) + place.offset, 0};
    case ArgumentPlace::Constant:
      return Slot{Slot::Fixed, constant_at.at(place.index), 0};
    case ArgumentPlace::Input:
      return Slot{Slot::Input, nullptr, place.index};
    case ArgumentPlace::Output:
      return Slot{Slot::Output, nullptr, place.index};
    }
    kiln_unreachable("unknown argument place");
  };

  Stopwatch compile_clock;
  std::vector<std::optional<codegen::ObjectCode>> objects(net.tasks.size());
  for (std::size_t t = 0; t < net.tasks.size(); ++t) {
    const graph::Task& task = net.tasks[t];
    auto object = catch_user_error([&] {
      schedule::LoweredFunc func = schedules[t].state ? schedule::lower(*schedules[t].state)
                                                      : schedule::lower_naive(task.dag);
      return (*compiler)->compile(func);
    });
    if (!object)
      return Error(object.error().id(),
                   fmt::format("task {} ({}): {}", t, task.key, object.error().message()));
    objects[t] = std::move(*object);
  }
  for (std::size_t k = 0; k < net.groups.size(); ++k) {
    auto kernel = cn->jit_->load(*objects[static_cast<std::size_t>(net.task_of_group[k])]);
    if (!kernel)
      return kernel.error();
    cn->kernels_.push_back(std::move(*kernel));
    std::vector<Slot> slots;
    for (const ArgumentPlace& place : binding.groups[k])
      slots.push_back(slot_of(place));
    cn->slots_.push_back(std::move(slots));
    cn->args_.emplace_back(net.kernels[k].arguments.size(), nullptr);
  }
  cn->compile_ms_ = compile_clock.elapsed_ms();

  for (const OutputCopy& copy : binding.output_copies)
    cn->output_copies_.push_back({slot_of(copy.from), copy.output, copy.bytes});

  // Pack every group's weights once; the activations they would read are
  // the arena's zeros (prepack reads only constants).
  Stopwatch prepack_clock;
  std::vector<std::vector<float>> zeros_in, zeros_out;
  for (int i : g.inputs)
    zeros_in.emplace_back(static_cast<std::size_t>(g.tensor(i).num_elements()), 0.0f);
  for (int o : g.outputs)
    zeros_out.emplace_back(static_cast<std::size_t>(g.tensor(o).num_elements()), 0.0f);
  std::vector<const float*> in_ptrs;
  std::vector<float*> out_ptrs;
  for (auto& z : zeros_in)
    in_ptrs.push_back(z.data());
  for (auto& z : zeros_out)
    out_ptrs.push_back(z.data());
  cn->bind(in_ptrs.data(), out_ptrs.data());
  for (std::size_t k = 0; k < cn->kernels_.size(); ++k)
    cn->kernels_[k]->prepack(cn->args_[k].data());
  cn->prepack_ms_ = prepack_clock.elapsed_ms();
  return cn;
}

void CompiledNetwork::bind(const float* const* inputs, float* const* outputs) {
  for (std::size_t k = 0; k < slots_.size(); ++k)
    for (std::size_t a = 0; a < slots_[k].size(); ++a) {
      const Slot& s = slots_[k][a];
      args_[k][a] = s.kind == Slot::Fixed   ? s.address
                    : s.kind == Slot::Input ? const_cast<float*>(inputs[s.index])
                                            : outputs[s.index];
    }
}

void CompiledNetwork::run(const float* const* inputs, float* const* outputs) {
  bind(inputs, outputs);
  for (std::size_t k = 0; k < kernels_.size(); ++k)
    kernels_[k]->run(args_[k].data());
  copy_outputs(inputs, outputs);
}

void CompiledNetwork::run_profiled(const float* const* inputs, float* const* outputs,
                                   double* group_ms) {
  bind(inputs, outputs);
  Stopwatch clock;
  for (std::size_t k = 0; k < kernels_.size(); ++k) {
    kernels_[k]->run(args_[k].data());
    group_ms[k] = clock.lap_ms();
  }
  copy_outputs(inputs, outputs);
}

void CompiledNetwork::copy_outputs(const float* const* inputs, float* const* outputs) {
  for (const Copy& copy : output_copies_) {
    const Slot& from = copy.from;
    const void* src = from.kind == Slot::Fixed   ? from.address
                      : from.kind == Slot::Input ? static_cast<const void*>(inputs[from.index])
                                                 : outputs[from.index];
    std::memcpy(outputs[copy.output], src, static_cast<std::size_t>(copy.bytes));
  }
}

} // namespace kiln::network
