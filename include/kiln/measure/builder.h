// The builder: turns a batch of configs into object code on a pool of
// threads (lowering, LLVM IR, optimisation, machine code). One config's
// failure is that config's error, never the batch's.
#ifndef KILN_MEASURE_BUILDER_H
#define KILN_MEASURE_BUILDER_H

#include "kiln/codegen/compiler.h"
#include "kiln/ir/compute_dag.h"
#include "kiln/measure/record.h"
#include "kiln/schedule/state.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace kiln::measure {

struct BuildResult {
  MeasureError error = MeasureError::None;
  std::string message;
  std::optional<codegen::ObjectCode> object;
  double seconds = 0; ///< lowering + compile
};

/// Makes the State of a config: replaying steps, or instantiating a
/// template. An Error is an invalid schedule.
using Instantiate = std::function<Expected<schedule::State>(const Config&)>;

/// Replays a config's steps on `dag`.
Instantiate replay_steps(const ir::ComputeDAG& dag);

class Builder {
public:
  /// `threads` < 1 means one per core.
  static Expected<std::unique_ptr<Builder>> create(const Target& target, int threads);
  ~Builder();

  int threads() const;
  std::vector<BuildResult> build(const std::vector<Config>& configs, const Instantiate& make);

private:
  struct Impl;
  explicit Builder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::measure

#endif
