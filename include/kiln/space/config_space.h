// AutoTVM-style config spaces: a template declares knobs, each a list of
// choices, and a config is one choice per knob.
//
// The four kinds of knob are AutoTVM's:
//  - split: the ways to tile one loop, as lengths outer first whose product
//    is the extent (exact divisors only, the "factors" policy), with a limit
//    on the innermost length (it is unrolled or vectorized, so it must stay
//    short);
//  - reorder: candidate orders of a group of loops;
//  - annotate: a choice among loop annotations ("none", "unroll", "vec", …);
//  - other: any list of integer values (a flag, an unroll step, a variant).
//
// The space is the product of the knobs. A config maps to an index by mixed
// radix with the first knob varying fastest (AutoTVM's order, which a grid
// search walks), and back; it can also be sampled, mutated (one knob
// redrawn) and crossed over (one cut point), which is what the annealing and
// genetic searches need.
#ifndef KILN_SPACE_CONFIG_SPACE_H
#define KILN_SPACE_CONFIG_SPACE_H

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::space {

enum class KnobKind : std::uint8_t { Split, Reorder, Annotate, Other };

/// "split", "reorder", "annotate", "other".
std::string_view knob_kind_name(KnobKind kind);

/// One knob: a name and its choices. Exactly one of the choice lists is
/// filled, the one of its kind.
struct Knob {
  std::string name;
  KnobKind kind = KnobKind::Other;
  std::vector<std::vector<std::int64_t>> splits; ///< split: lengths, outer first
  std::vector<std::vector<std::string>> orders;  ///< reorder: loop names, outer first
  std::vector<std::string> annotations;          ///< annotate: "none", "unroll", "vec", …
  std::vector<std::int64_t> values;              ///< other

  std::uint64_t size() const;
  /// The choice as text: "[4, 2, 8]", "[k.0, i, k.1, j]", "unroll", "16".
  std::string choice_text(std::int64_t choice) const;
};

/// One choice index per knob, in the order the knobs were defined.
using KnobConfig = std::vector<std::int64_t>;

class ConfigSpace {
public:
  /// The exact factorizations of `extent` into `parts` lengths whose
  /// innermost is at most `max_innermost` (0: no limit).
  void define_split(std::string name, std::int64_t extent, int parts,
                    std::int64_t max_innermost = 0);
  void define_reorder(std::string name, std::vector<std::vector<std::string>> candidates);
  void define_annotate(std::string name, std::vector<std::string> choices);
  void define_knob(std::string name, std::vector<std::int64_t> values);

  const std::vector<Knob>& knobs() const { return knobs_; }
  /// Index of the knob with this name, or -1.
  int find(std::string_view name) const;

  /// Number of configs; nullopt when it does not fit in 64 bits.
  std::optional<std::uint64_t> size() const;
  /// The config at `index` in [0, size()): mixed radix, first knob fastest.
  KnobConfig at(std::uint64_t index) const;
  /// The inverse of at() for a valid config.
  std::uint64_t index_of(const KnobConfig& config) const;
  /// One choice per knob, each in range.
  bool valid(const KnobConfig& config) const;

  /// Uniform over the space (each knob drawn independently).
  KnobConfig sample(std::mt19937_64& rng) const;
  /// One knob with more than one choice redrawn to a different choice.
  KnobConfig mutate(const KnobConfig& config, std::mt19937_64& rng) const;
  /// Every config one knob away (each other choice of each knob), with the
  /// knob's index.
  std::vector<std::pair<int, KnobConfig>> neighbours(const KnobConfig& config) const;
  /// Single-point crossover (AutoTVM's GA): knobs before a random cut from
  /// `a`, the rest from `b`.
  KnobConfig crossover(const KnobConfig& a, const KnobConfig& b, std::mt19937_64& rng) const;

  /// "tile_y=[4, 2, 8] reorder=[k.0, i, k.1, j] …".
  std::string describe(const KnobConfig& config) const;
  /// One line per knob: name, kind, number of choices, and the choices
  /// when there are few.
  std::string describe() const;

private:
  void add(Knob knob);
  std::vector<Knob> knobs_;
};

/// A config seen through its space: the chosen value of each knob by name,
/// as a template function reads it. Asking for a knob the space lacks, or of
/// another kind, is a bug in the template.
class ConfigView {
public:
  ConfigView(const ConfigSpace& space, const KnobConfig& config);

  const std::vector<std::int64_t>& split(std::string_view name) const;
  const std::vector<std::string>& order(std::string_view name) const;
  const std::string& annotation(std::string_view name) const;
  std::int64_t value(std::string_view name) const;

private:
  const Knob& knob(std::string_view name, KnobKind kind, std::int64_t& choice) const;
  const ConfigSpace& space_;
  const KnobConfig& config_;
};

} // namespace kiln::space

#endif
