// A search space for tests that remembers the point of every schedule it
// built, so that a simulated measurer, which is given schedules, can price
// them by their points (knobs or sketch annotations).
#pragma once

#include "kiln/search/search_space.h"

#include <map>
#include <mutex>

namespace kiln::test {

template <class Space> class RecordingSpace : public Space {
public:
  using Space::Space;

  Expected<schedule::State> state(const search::Point& p) const override {
    auto s = Space::state(p);
    if (s) {
      std::lock_guard<std::mutex> lock(mutex_); // predict() builds on two threads
      points_[s->key()] = p;
    }
    return s;
  }

  /// The point a schedule was built from; nullptr for one the space never
  /// built (the naive schedule, a start schedule read from a file).
  const search::Point* point_built(const schedule::State& s) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = points_.find(s.key());
    return it == points_.end() ? nullptr : &it->second;
  }

private:
  mutable std::mutex mutex_;
  mutable std::map<schedule::ProgramKey, search::Point> points_;
};

} // namespace kiln::test
