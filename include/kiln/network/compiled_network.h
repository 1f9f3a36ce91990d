// A network compiled to run: each task's schedule compiled once, loaded
// once per group it computes (each group packs its own weights ahead), the
// activations in one arena (buffer_plan.h), the groups run in order.
#ifndef KILN_NETWORK_COMPILED_NETWORK_H
#define KILN_NETWORK_COMPILED_NETWORK_H

#include "kiln/codegen/jit.h"
#include "kiln/graph/network.h"
#include "kiln/measure/measurer.h"
#include "kiln/network/buffer_plan.h"
#include "kiln/record/record.h"
#include "kiln/schedule/state.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::network {

/// The schedule one task runs with.
struct TaskSchedule {
  std::optional<schedule::State> state; ///< none: the naive schedule
  /// Where it came from: "naive (no record)", "log: trial 412 (exact target)".
  std::string source;
  double record_ms = -1; ///< the record's median time; -1 without a record
};

/// Each task's best valid record in `records` for `target` (history_best:
/// the exact target, else the same family, else any). A task with no record:
/// with `nearest` (measure options; `target` must be this machine), the
/// nearest tuned shape of its op, refitted, checked and timed here
/// (measure::pick_nearest_shape), else the naive schedule.
std::vector<TaskSchedule> schedules_from_records(const graph::Network& net,
                                                 const std::vector<record::Record>& records,
                                                 const Target& target,
                                                 const measure::MeasureOptions* nearest = nullptr);
/// The naive schedule for every task.
std::vector<TaskSchedule> naive_schedules(const graph::Network& net);

class CompiledNetwork {
public:
  /// Compiles every task with its schedule and packs every group's weights.
  static Expected<std::unique_ptr<CompiledNetwork>>
  compile(const graph::Network& net, const std::vector<TaskSchedule>& schedules,
          const Target& target);
  ~CompiledNetwork();

  /// One pointer per graph input and per graph output (row-major f32,
  /// 64-byte aligned, not overlapping).
  void run(const float* const* inputs, float* const* outputs);
  /// As run(), timing each group as it runs in the sequence, after the
  /// group before it (its inputs where that group left them): the
  /// milliseconds of group k go to group_ms[k] (one per group).
  void run_profiled(const float* const* inputs, float* const* outputs, double* group_ms);

  const BufferPlan& buffers() const { return plan_; }
  double compile_ms() const { return compile_ms_; }
  double prepack_ms() const { return prepack_ms_; }

private:
  CompiledNetwork() = default;
  /// Where each argument of each group points: a fixed address (the
  /// arena, a constant) or the i-th graph input or output.
  struct Slot {
    enum Kind : std::uint8_t { Fixed, Input, Output } kind = Fixed;
    void* address = nullptr;
    int index = 0;
  };
  void bind(const float* const* inputs, float* const* outputs);
  void copy_outputs(const float* const* inputs, float* const* outputs);

  const graph::Network* net_ = nullptr;
  BufferPlan plan_;
  std::unique_ptr<codegen::Jit> jit_;
  std::vector<std::unique_ptr<codegen::LoadedKernel>> kernels_; ///< one per group
  std::vector<std::vector<Slot>> slots_;                        ///< per group, per argument
  std::vector<std::vector<void*>> args_;                        ///< per group, bound by run()
  struct FreeAligned {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, FreeAligned> arena_;
  std::vector<std::unique_ptr<void, FreeAligned>> constants_;
  /// Graph outputs whose values another buffer holds (an output that is a
  /// graph input, or a second output of the same tensor): copied after.
  struct Copy {
    Slot from;
    int output = 0;
    std::int64_t bytes = 0;
  };
  std::vector<Copy> output_copies_;
  double compile_ms_ = 0, prepack_ms_ = 0;
};

} // namespace kiln::network

#endif // KILN_NETWORK_COMPILED_NETWORK_H
