#include "kiln/schedule/program_key.h"

#include <fmt/format.h>

#include <type_traits>

namespace kiln::schedule {

namespace {

/// Two independent 64-bit streams over the same bytes: FNV-1a, and a
/// multiply-xorshift mix. Fields are length-prefixed, so that ("ab", "c")
/// and ("a", "bc") differ.
class KeyHasher {
public:
  void bytes(const void* data, std::size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) {
      a_ = (a_ ^ p[i]) * 0x100000001b3ULL;
      b_ = (b_ + p[i] + 1) * 0x9e3779b97f4a7c15ULL;
      b_ ^= b_ >> 29;
    }
  }
  void integer(std::int64_t v) { bytes(&v, sizeof v); }
  void text(const std::string& s) {
    integer(static_cast<std::int64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void texts(const std::vector<std::string>& v) {
    integer(static_cast<std::int64_t>(v.size()));
    for (const std::string& s : v)
      text(s);
  }
  void integers(const std::vector<std::int64_t>& v) {
    integer(static_cast<std::int64_t>(v.size()));
    for (std::int64_t x : v)
      integer(x);
  }

  ProgramKey key() const {
    // A final avalanche, so that keys of similar step lists share no bits.
    auto finish = [](std::uint64_t z) {
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return z ^ (z >> 31);
    };
    return ProgramKey{finish(a_), finish(b_ ^ a_)};
  }

private:
  std::uint64_t a_ = 0xcbf29ce484222325ULL;
  std::uint64_t b_ = 0x2545f4914f6cdd1dULL;
};

void hash_step(KeyHasher& h, const Step& step) {
  h.integer(static_cast<std::int64_t>(step.index()));
  std::visit(
      [&](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        h.text(s.stage);
        if constexpr (std::is_same_v<T, SplitStep>) {
          h.text(s.iter);
          h.integers(s.factors);
        } else if constexpr (std::is_same_v<T, FuseStep>) {
          h.texts(s.iters);
        } else if constexpr (std::is_same_v<T, ReorderStep>) {
          h.texts(s.order);
        } else if constexpr (std::is_same_v<T, ComputeAtStep>) {
          h.text(s.target);
          h.text(s.target_iter);
        } else if constexpr (std::is_same_v<T, CacheReadStep>) {
          h.text(s.reader);
        } else if constexpr (std::is_same_v<T, AnnotateStep>) {
          h.text(s.iter);
          h.integer(static_cast<std::int64_t>(s.annotation));
        } else if constexpr (std::is_same_v<T, PragmaStep>) {
          h.integer(s.auto_unroll_max_step);
        } else if constexpr (std::is_same_v<T, RfactorStep>) {
          h.text(s.iter);
          h.integer(s.factor);
        } else {
          static_assert(std::is_same_v<T, ComputeInlineStep> ||
                            std::is_same_v<T, ComputeRootStep> || std::is_same_v<T, CacheWriteStep>,
                        "a new step kind must hash its fields here");
        }
      },
      step);
}

} // namespace

std::string ProgramKey::to_string() const {
  return fmt::format("{:016x}{:016x}", hi, lo);
}

ProgramKey program_key(std::span<const Step> steps) {
  KeyHasher h;
  h.integer(static_cast<std::int64_t>(steps.size()));
  for (const Step& s : steps)
    hash_step(h, s);
  return h.key();
}

} // namespace kiln::schedule
