#include "kiln/support/target.h"

#include <algorithm>
#include <sstream>

namespace kiln {

int Target::vector_lanes(int element_bits) const {
  return std::max(1, vector_bits / std::max(8, element_bits));
}

std::string Target::enabled_features() const {
  std::string out;
  std::stringstream ss(features);
  std::string f;
  while (std::getline(ss, f, ',')) {
    if (f.empty() || f[0] != '+')
      continue;
    if (!out.empty())
      out += ' ';
    out.append(f, 1);
  }
  return out;
}

std::string Target::arch() const {
  return triple.substr(0, triple.find('-'));
}

} // namespace kiln
