// The identity of a program: a 128-bit hash of a schedule's steps, the same
// on every machine and in every build. Two states with equal keys replay the
// same steps on the same DAG, so they are one program: the search, the
// tuner, the feature cache and a resumed log all decide "already measured"
// by it, and nothing else.
#ifndef KILN_SCHEDULE_PROGRAM_KEY_H
#define KILN_SCHEDULE_PROGRAM_KEY_H

#include "kiln/schedule/transform_step.h"

#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kiln::schedule {

struct ProgramKey {
  std::uint64_t hi = 0, lo = 0;

  friend bool operator==(const ProgramKey&, const ProgramKey&) = default;
  friend auto operator<=>(const ProgramKey&, const ProgramKey&) = default;
  /// 32 hexadecimal digits.
  std::string to_string() const;
};

struct ProgramKeyHash {
  std::size_t operator()(const ProgramKey& k) const { return static_cast<std::size_t>(k.lo); }
};

/// The key of the program these steps make (of one DAG: the key does not
/// name it). The naive schedule, no steps, has a key too.
ProgramKey program_key(std::span<const Step> steps);

} // namespace kiln::schedule

#endif // KILN_SCHEDULE_PROGRAM_KEY_H
