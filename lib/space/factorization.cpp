#include "kiln/space/factorization.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace kiln::space {

static void enumerate(std::int64_t rest, int parts, std::int64_t max_innermost,
                      std::int64_t innermost_multiple, std::vector<std::int64_t>& prefix,
                      std::vector<std::vector<std::int64_t>>& out) {
  if (parts == 1) {
    if ((rest <= max_innermost || prefix.empty()) && rest % innermost_multiple == 0) {
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
    enumerate(rest / f, parts - 1, max_innermost, innermost_multiple, prefix, out);
    prefix.pop_back();
  }
}

const std::vector<std::vector<std::int64_t>>& factorizations(std::int64_t extent, int parts,
                                                             std::int64_t max_innermost,
                                                             std::int64_t innermost_multiple) {
  using Key = std::tuple<std::int64_t, int, std::int64_t, std::int64_t>;
  static std::mutex mutex;
  static std::map<Key, std::unique_ptr<std::vector<std::vector<std::int64_t>>>> cache;
  innermost_multiple = std::max<std::int64_t>(innermost_multiple, 1);
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{extent, parts, max_innermost, innermost_multiple}];
  if (!slot) {
    slot = std::make_unique<std::vector<std::vector<std::int64_t>>>();
    std::vector<std::int64_t> prefix;
    enumerate(extent, parts, max_innermost, innermost_multiple, prefix, *slot);
    if (slot->empty()) { // no innermost factor short enough, or a multiple
      std::vector<std::int64_t> whole(parts, 1);
      whole[0] = extent;
      slot->push_back(whole);
    }
  }
  return *slot;
}

} // namespace kiln::space
