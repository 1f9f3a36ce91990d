#include "kiln/search/search_space.h"

#include "kiln/schedule/lower.h"

#include <fmt/format.h>

namespace kiln::search {

model::ProgramFeatures SearchSpace::features(const Point& p) const {
  auto s = state(p);
  if (!s)
    return {};
  return model::extract_features(schedule::lower(*s, {.expand_unrolled = false}));
}

Point SketchSearchSpace::sample(std::mt19937_64& rng) const {
  return space_.flatten(space_.sample(rng));
}

Point SketchSearchSpace::mutate(const Point& p, std::mt19937_64& rng) const {
  auto c = space_.unflatten(p);
  return c ? space_.flatten(space_.mutate(*c, rng)) : sample(rng);
}

Point SketchSearchSpace::crossover(const Point& a, const Point& b, std::mt19937_64& rng) const {
  auto x = space_.unflatten(a), y = space_.unflatten(b);
  if (!x || !y)
    return a;
  return space_.flatten(space_.crossover(*x, *y, rng));
}

Expected<schedule::State> SketchSearchSpace::state(const Point& p) const {
  auto c = space_.unflatten(p);
  if (!c)
    return Error("invalid-step",
                 fmt::format("not a point of the sketch space ({} numbers)", p.size()));
  return schedule::State::replay(space_.dag(), space_.steps(*c));
}

measure::Config SketchSearchSpace::config(const Point& p) const {
  measure::Config c;
  if (auto sc = space_.unflatten(p))
    c.steps = space_.steps(*sc);
  c.point = p;
  return c;
}

std::optional<Point> SketchSearchSpace::point_of(const measure::Config& c) const {
  if (c.point.empty() || !c.template_name.empty())
    return std::nullopt;
  auto sc = space_.unflatten(c.point);
  if (!sc || space_.steps(*sc) != c.steps)
    return std::nullopt; // logged by a different space (another kiln or machine)
  return c.point;
}

} // namespace kiln::search
