#include "kiln/search/search_space.h"

#include <fmt/format.h>

namespace kiln::search {

std::optional<schedule::ProgramKey> SearchSpace::key(const Point& p) const {
  auto s = steps(p);
  if (!s)
    return std::nullopt;
  return schedule::program_key(*s);
}

Point SketchSearchSpace::sample(std::mt19937_64& rng) const {
  return space_.flatten(space_.sample(rng));
}

Point SketchSearchSpace::sample_family(int sketch, std::mt19937_64& rng) const {
  return space_.flatten(space_.sample(sketch, rng));
}

int SketchSearchSpace::family(const Point& p) const {
  // A point's first number is its sketch (SketchSpace::flatten).
  return !p.empty() && p[0] >= 0 && p[0] < families() ? static_cast<int>(p[0]) : 0;
}

Point SketchSearchSpace::mutate(const Point& p, std::mt19937_64& rng) const {
  auto c = space_.unflatten(p);
  return c ? space_.flatten(space_.mutate(*c, rng)) : sample(rng);
}

std::vector<std::pair<int, Point>> SketchSearchSpace::neighbours(const Point& p) const {
  std::vector<std::pair<int, Point>> out;
  if (auto c = space_.unflatten(p))
    for (auto& [decision, n] : space_.neighbours(*c))
      out.emplace_back(decision, space_.flatten(n));
  return out;
}

Point SketchSearchSpace::crossover(const Point& a, const Point& b, std::mt19937_64& rng) const {
  auto x = space_.unflatten(a), y = space_.unflatten(b);
  if (!x || !y)
    return a;
  return space_.flatten(space_.crossover(*x, *y, rng));
}

Expected<std::vector<schedule::Step>> SketchSearchSpace::steps(const Point& p) const {
  auto c = space_.unflatten(p);
  if (!c)
    return Error("invalid-step",
                 fmt::format("not a point of the sketch space ({} numbers)", p.size()));
  return space_.steps(*c);
}

Expected<schedule::State> SketchSearchSpace::state(const Point& p) const {
  auto c = space_.unflatten(p);
  if (!c)
    return Error("invalid-step",
                 fmt::format("not a point of the sketch space ({} numbers)", p.size()));
  return space_.state(*c);
}

record::Config SketchSearchSpace::config(const Point& p) const {
  record::Config c;
  if (auto sc = space_.unflatten(p))
    c.steps = space_.steps(*sc);
  c.point = p;
  return c;
}

std::optional<Point> SketchSearchSpace::point_of(const record::Config& c) const {
  if (c.point.empty() || !c.template_name.empty())
    return std::nullopt;
  auto sc = space_.unflatten(c.point);
  if (!sc || space_.steps(*sc) != c.steps)
    return std::nullopt; // logged by a different space (another kiln or machine)
  return c.point;
}

Expected<std::unique_ptr<SearchSpace>> make_search_space(const ir::ComputeDAG& dag,
                                                         const Target& target,
                                                         const std::string& space_name,
                                                         const std::string& template_name) {
  if (space_name == "sketch" && !template_name.empty())
    return Error("bad-option", fmt::format("--template {} needs --space template (or drop "
                                           "--space sketch)",
                                           template_name));
  if (space_name != "template" && template_name.empty())
    return std::unique_ptr<SearchSpace>(new SketchSearchSpace(dag, space::space_params(target)));
  auto t = template_name.empty()
               ? space::match_template(dag, space::space_params(target))
               : space::make_template(template_name, dag, space::space_params(target));
  if (!t)
    return t.error();
  return std::unique_ptr<SearchSpace>(new TemplateSearchSpace(std::move(*t)));
}

} // namespace kiln::search
