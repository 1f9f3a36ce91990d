#include "kiln/search/search_space.h"

#include <fmt/format.h>

namespace kiln::search {

Point TemplateSearchSpace::sample(std::mt19937_64& rng) const {
  return template_->space().sample(rng);
}

Point TemplateSearchSpace::mutate(const Point& p, std::mt19937_64& rng) const {
  return template_->space().mutate(p, rng);
}

std::vector<std::pair<int, Point>> TemplateSearchSpace::neighbours(const Point& p) const {
  return template_->space().neighbours(p); // a point is its knob choices
}

Point TemplateSearchSpace::crossover(const Point& a, const Point& b, std::mt19937_64& rng) const {
  return template_->space().crossover(a, b, rng);
}

Expected<std::vector<schedule::Step>> TemplateSearchSpace::steps(const Point& p) const {
  if (!template_->space().valid(p))
    return Error("invalid-step",
                 fmt::format("not a config of template '{}' ({} numbers for {} "
                             "knobs, or a choice out of range)",
                             template_->name(), p.size(), template_->space().knobs().size()));
  return template_->steps(p);
}

Expected<schedule::State> TemplateSearchSpace::state(const Point& p) const {
  auto s = steps(p);
  if (!s)
    return s.error();
  return schedule::State::replay(template_->dag(), *s);
}

record::Config TemplateSearchSpace::config(const Point& p) const {
  record::Config c;
  c.template_name = std::string(template_->name());
  const space::ConfigSpace& sp = template_->space();
  if (sp.valid(p)) {
    c.steps = template_->steps(p);
    for (std::size_t i = 0; i < p.size(); ++i)
      c.knobs.emplace_back(sp.knobs()[i].name, p[i]);
  }
  c.point = p;
  return c;
}

std::optional<Point> TemplateSearchSpace::point_of(const record::Config& c) const {
  const space::ConfigSpace& sp = template_->space();
  if (c.template_name != template_->name() || c.knobs.size() != sp.knobs().size())
    return std::nullopt;
  Point p;
  for (std::size_t i = 0; i < c.knobs.size(); ++i) {
    if (c.knobs[i].first != sp.knobs()[i].name)
      return std::nullopt;
    p.push_back(c.knobs[i].second);
  }
  if (!sp.valid(p))
    return std::nullopt;
  // The same knobs may mean other steps in another kiln (or for another
  // shape's factorizations): such a record is not this point.
  if (!c.steps.empty() && template_->steps(p) != c.steps)
    return std::nullopt;
  return p;
}

std::optional<std::uint64_t> TemplateSearchSpace::size() const {
  return template_->space().size();
}

Point TemplateSearchSpace::at(std::uint64_t index) const {
  return template_->space().at(index);
}

} // namespace kiln::search
