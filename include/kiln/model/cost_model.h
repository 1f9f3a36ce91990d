// The cost model: scores programs (higher is faster) from their features,
// and learns from measured ones. The search ranks candidates with it; it
// never sees logs, measurement or codegen (its caller turns records into
// samples).
#ifndef KILN_MODEL_COST_MODEL_H
#define KILN_MODEL_COST_MODEL_H

#include "kiln/model/features.h"
#include "kiln/model/sample.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace kiln::model {

class CostModel {
public:
  virtual ~CostModel() = default;
  /// One score per program, higher is faster.
  virtual std::vector<double> predict(std::span<const ProgramFeatures* const> programs) = 0;
  std::vector<double> predict(const std::vector<ProgramFeatures>& programs);
  /// Retrains on all the samples given (the caller passes everything
  /// measured so far).
  virtual void train(const std::vector<Sample>& samples) = 0;
  /// Whether predictions carry information (false before any training).
  virtual bool trained() const = 0;
};

/// Scores at random (seeded): the cold-start model, and the baseline the
/// learned model must beat.
class RandomModel : public CostModel {
public:
  explicit RandomModel(std::uint64_t seed) : state_(seed) {}
  using CostModel::predict;
  std::vector<double> predict(std::span<const ProgramFeatures* const> programs) override;
  void train(const std::vector<Sample>&) override {}
  bool trained() const override { return false; }

private:
  std::uint64_t state_;
};

} // namespace kiln::model

#endif
