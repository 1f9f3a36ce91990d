// The builder: turns a batch of schedules into object code on a pool of
// threads (lowering, LLVM IR, optimisation, machine code). One schedule's
// failure is that schedule's error, never the batch's.
#ifndef KILN_MEASURE_BUILDER_H
#define KILN_MEASURE_BUILDER_H

#include "kiln/codegen/compiler.h"
#include "kiln/record/record.h"
#include "kiln/schedule/state.h"

#include <memory>
#include <optional>
#include <span>
#include <vector>

namespace kiln::measure {

struct BuildResult {
  record::MeasureError error = record::MeasureError::None;
  std::string message;
  std::optional<codegen::ObjectCode> object;
  double seconds = 0; ///< lowering + compile
};

class Builder {
public:
  /// `threads` < 1 means one per core.
  static Expected<std::unique_ptr<Builder>> create(const Target& target, int threads);
  ~Builder();

  int threads() const;
  /// One result per state, in order.
  std::vector<BuildResult> build(std::span<const schedule::State* const> states);

private:
  struct Impl;
  explicit Builder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kiln::measure

#endif
