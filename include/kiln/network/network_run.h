// Running a compiled network as `kiln run MODEL` does: seeded inputs, the
// outputs checked against the same network with naive kernels, the latency
// timed as the median of repeated runs.
#ifndef KILN_NETWORK_NETWORK_RUN_H
#define KILN_NETWORK_NETWORK_RUN_H

#include "kiln/network/compiled_network.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::network {

struct NetworkRunOptions {
  std::uint64_t seed = 1; ///< of the inputs: standard normal values
  int warmup = 3;
  int repeat = 20;
  /// Check the outputs against the network with every task naive (skipped
  /// when every task already is).
  bool check = true;
  double rtol = 1e-3, atol = 1e-4;
  /// When set, writes PREFIX.in<i>.f32 and PREFIX.out<i>.f32 (raw f32):
  /// the inputs and outputs, for another runtime to compare with.
  std::string write_io;
  /// When positive, after the timed runs: this many more runs timing each
  /// group where it runs in the network (NetworkRunReport::group_ms).
  int profile_repeats = 0;
};

struct NetworkRunReport {
  double compile_ms = 0, prepack_ms = 0;
  std::int64_t arena_bytes = 0, unshared_bytes = 0;
  std::vector<double> times_ms;
  double median_ms = 0;
  /// Σ weight × the record's time over the tasks; -1 when a task has no
  /// record.
  double estimate_ms = -1;
  bool checked = false;
  double max_abs_error = 0, max_rel_error = 0;
  bool passed = true;
  /// With profile_repeats: each group's median milliseconds inside the
  /// network's runs, in the order the groups run.
  std::vector<double> group_ms;
};

/// One task's share of a profiled run: its groups' time in the network
/// against what its record says they take alone.
struct TaskProfile {
  int task = 0;
  double network_ms = 0; ///< Σ over its groups of their median in the network
  double record_ms = -1; ///< weight × the record's time; -1 without a record
};

/// The profile by task, the slowest first.
std::vector<TaskProfile> profile_by_task(const graph::Network& net,
                                         const std::vector<TaskSchedule>& schedules,
                                         const std::vector<double>& group_ms);

/// Seeded inputs of a network: standard normal values, one buffer per graph
/// input.
std::vector<std::vector<float>> seeded_inputs(const graph::Network& net, std::uint64_t seed);

Expected<NetworkRunReport> run_network(const graph::Network& net,
                                       const std::vector<TaskSchedule>& schedules,
                                       const Target& target, const NetworkRunOptions& options);

} // namespace kiln::network

#endif // KILN_NETWORK_NETWORK_RUN_H
