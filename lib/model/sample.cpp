#include "kiln/model/sample.h"

#include <algorithm>
#include <map>

namespace kiln::model {

std::vector<Sample> label_samples(const std::vector<Measured>& measured) {
  std::map<std::string, double> best; // per group
  for (const Measured& m : measured)
    if (m.seconds > 0) {
      double& b = best[m.group];
      b = b == 0 ? m.seconds : std::min(b, m.seconds);
    }
  std::vector<Sample> samples;
  samples.reserve(measured.size());
  for (const Measured& m : measured)
    if (!m.features.rows.empty())
      samples.push_back({m.features, m.seconds > 0 ? best[m.group] / m.seconds : 0.0, m.group});
  return samples;
}

} // namespace kiln::model
