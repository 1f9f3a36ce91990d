#include "kiln/space/factorization.h"

#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace kiln::space {

static void enumerate(std::int64_t rest, int parts, std::int64_t max_innermost,
                      std::vector<std::int64_t>& prefix,
                      std::vector<std::vector<std::int64_t>>& out) {
  if (parts == 1) {
    if (rest <= max_innermost || prefix.empty()) {
      prefix.push_back(rest);
      out.push_back(prefix);
      prefix.pop_back();
    }
    return;
  }
  for (std::int64_t f = 1; f <= rest; ++f) {
    if (rest % f != 0)
      continue;
    prefix.push_back(f);
    enumerate(rest / f, parts - 1, max_innermost, prefix, out);
    prefix.pop_back();
  }
}

const std::vector<std::vector<std::int64_t>>& factorizations(std::int64_t extent, int parts,
                                                             std::int64_t max_innermost) {
  using Key = std::tuple<std::int64_t, int, std::int64_t>;
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<std::vector<std::vector<std::int64_t>>>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{extent, parts, max_innermost}];
  if (!slot) {
    slot = std::make_unique<std::vector<std::vector<std::int64_t>>>();
    std::vector<std::int64_t> prefix;
    enumerate(extent, parts, max_innermost, prefix, *slot);
    if (slot->empty()) { // only when every factorization's innermost is too long
      std::vector<std::int64_t> whole(parts, 1);
      whole[0] = extent;
      slot->push_back(whole);
    }
  }
  return *slot;
}

} // namespace kiln::space
