#include "kiln/model/cost_model.h"

#include <limits>

namespace kiln::model {

std::vector<double> CostModel::predict(const std::vector<ProgramFeatures>& programs) {
  std::vector<const ProgramFeatures*> ptrs;
  ptrs.reserve(programs.size());
  for (const ProgramFeatures& p : programs)
    ptrs.push_back(&p);
  return predict(std::span<const ProgramFeatures* const>(ptrs));
}

std::vector<double> RandomModel::predict(std::span<const ProgramFeatures* const> programs) {
  std::vector<double> scores;
  scores.reserve(programs.size());
  for (const ProgramFeatures* program : programs) {
    const ProgramFeatures& p = *program;
    // splitmix64: one state word, good enough spread, reproducible everywhere
    // (std::uniform_real_distribution is not specified bit for bit).
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    // A program without rows failed to lower: it can never be picked.
    scores.push_back(p.rows.empty() ? -std::numeric_limits<double>::infinity()
                                    : static_cast<double>(z >> 11) * 0x1.0p-53);
  }
  return scores;
}

} // namespace kiln::model
