#include "kiln/network/network_run.h"

#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

namespace kiln::network {

namespace {

/// 64-byte aligned f32 buffers, one per graph input or output.
struct Buffers {
  std::vector<std::unique_ptr<float[], void (*)(float*)>> owned;
  std::vector<float*> pointers;

  explicit Buffers(const std::vector<std::int64_t>& sizes) {
    for (std::int64_t n : sizes) {
      const auto bytes = static_cast<std::size_t>((n * 4 + 63) / 64 * 64);
      auto* p = static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(bytes, 64)));
      KILN_ASSERT(p != nullptr, "out of memory for a network's inputs and outputs");
      std::memset(p, 0, bytes);
      owned.emplace_back(p, [](float* q) { std::free(q); });
      pointers.push_back(p);
    }
  }
};

std::vector<std::int64_t> sizes_of(const graph::Graph& g, const std::vector<int>& tensors) {
  std::vector<std::int64_t> sizes;
  for (int t : tensors)
    sizes.push_back(g.tensor(t).num_elements());
  return sizes;
}

std::optional<Error> write_f32(const std::string& path, const float* data, std::int64_t n) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n * 4));
  out.close();
  if (!out)
    return Error("cannot-write", fmt::format("cannot write '{}'", path));
  return std::nullopt;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

std::vector<std::vector<float>> seeded_inputs(const graph::Network& net, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> inputs;
  for (int t : net.graph.inputs) {
    std::vector<float> v(static_cast<std::size_t>(net.graph.tensor(t).num_elements()));
    for (float& x : v)
      x = normal(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

Expected<NetworkRunReport> run_network(const graph::Network& net,
                                       const std::vector<TaskSchedule>& schedules,
                                       const Target& target, const NetworkRunOptions& options) {
  const graph::Graph& g = net.graph;
  auto compiled = CompiledNetwork::compile(net, schedules, target);
  if (!compiled)
    return compiled.error();
  NetworkRunReport report;
  report.compile_ms = (*compiled)->compile_ms();
  report.prepack_ms = (*compiled)->prepack_ms();
  report.arena_bytes = (*compiled)->buffers().arena_bytes;
  report.unshared_bytes = (*compiled)->buffers().unshared_bytes;

  Buffers in(sizes_of(g, g.inputs)), out(sizes_of(g, g.outputs));
  std::vector<std::vector<float>> values = seeded_inputs(net, options.seed);
  for (std::size_t i = 0; i < values.size(); ++i)
    std::copy(values[i].begin(), values[i].end(), in.pointers[i]);
  std::vector<const float*> in_ptrs(in.pointers.begin(), in.pointers.end());
  (*compiled)->run(in_ptrs.data(), out.pointers.data());

  double estimate = 0;
  for (std::size_t t = 0; t < net.tasks.size(); ++t)
    estimate = schedules[t].record_ms < 0 || estimate < 0
                   ? -1
                   : estimate + schedules[t].record_ms * net.tasks[t].weight();
  report.estimate_ms = estimate;

  const bool all_naive = std::all_of(schedules.begin(), schedules.end(),
                                     [](const TaskSchedule& s) { return !s.state; });
  if (options.check && !all_naive) {
    auto reference = CompiledNetwork::compile(net, naive_schedules(net), target);
    if (!reference)
      return reference.error();
    Buffers want(sizes_of(g, g.outputs));
    (*reference)->run(in_ptrs.data(), want.pointers.data());
    report.checked = true;
    for (std::size_t o = 0; o < g.outputs.size(); ++o)
      for (std::int64_t i = 0; i < g.tensor(g.outputs[o]).num_elements(); ++i) {
        const double a = out.pointers[o][i], b = want.pointers[o][i];
        const double err = std::fabs(a - b);
        report.max_abs_error = std::max(report.max_abs_error, err);
        report.max_rel_error = std::max(report.max_rel_error, err / std::max(std::fabs(b), 1e-30));
        if (!(err <= options.atol + options.rtol * std::fabs(b)))
          report.passed = false;
      }
  }
  if (!options.write_io.empty()) {
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      if (auto e = write_f32(fmt::format("{}.in{}.f32", options.write_io, i), in.pointers[i],
                             g.tensor(g.inputs[i]).num_elements()))
        return *e;
    for (std::size_t o = 0; o < g.outputs.size(); ++o)
      if (auto e = write_f32(fmt::format("{}.out{}.f32", options.write_io, o), out.pointers[o],
                             g.tensor(g.outputs[o]).num_elements()))
        return *e;
  }

  for (int r = 0; r < options.warmup; ++r)
    (*compiled)->run(in_ptrs.data(), out.pointers.data());
  for (int r = 0; r < options.repeat; ++r) {
    Stopwatch clock;
    (*compiled)->run(in_ptrs.data(), out.pointers.data());
    report.times_ms.push_back(clock.elapsed_ms());
  }
  report.median_ms = median(report.times_ms);

  if (options.profile_repeats > 0) {
    const std::size_t groups = net.groups.size();
    std::vector<std::vector<double>> samples(groups);
    std::vector<double> one_run(groups);
    for (int r = 0; r < options.profile_repeats; ++r) {
      (*compiled)->run_profiled(in_ptrs.data(), out.pointers.data(), one_run.data());
      for (std::size_t k = 0; k < groups; ++k)
        samples[k].push_back(one_run[k]);
    }
    for (std::vector<double>& s : samples)
      report.group_ms.push_back(median(s));
  }
  return report;
}

std::vector<TaskProfile> profile_by_task(const graph::Network& net,
                                         const std::vector<TaskSchedule>& schedules,
                                         const std::vector<double>& group_ms) {
  KILN_ASSERT(group_ms.size() == net.groups.size(), "a profile has one time per group");
  std::vector<TaskProfile> tasks(net.tasks.size());
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    tasks[t].task = static_cast<int>(t);
    if (schedules[t].record_ms >= 0)
      tasks[t].record_ms = schedules[t].record_ms * net.tasks[t].weight();
  }
  for (std::size_t k = 0; k < group_ms.size(); ++k)
    tasks[static_cast<std::size_t>(net.task_of_group[k])].network_ms += group_ms[k];
  std::stable_sort(tasks.begin(), tasks.end(), [](const TaskProfile& a, const TaskProfile& b) {
    return a.network_ms > b.network_ms;
  });
  return tasks;
}

} // namespace kiln::network
