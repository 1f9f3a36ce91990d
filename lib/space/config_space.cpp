#include "kiln/space/config_space.h"

#include "kiln/space/factorization.h"
#include "kiln/support/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <limits>

namespace kiln::space {

std::string_view knob_kind_name(KnobKind kind) {
  switch (kind) {
  case KnobKind::Split:
    return "split";
  case KnobKind::Reorder:
    return "reorder";
  case KnobKind::Annotate:
    return "annotate";
  case KnobKind::Other:
    return "other";
  }
  return "other";
}

std::uint64_t Knob::size() const {
  switch (kind) {
  case KnobKind::Split:
    return splits.size();
  case KnobKind::Reorder:
    return orders.size();
  case KnobKind::Annotate:
    return annotations.size();
  case KnobKind::Other:
    return values.size();
  }
  return 0;
}

std::string Knob::choice_text(std::int64_t choice) const {
  auto c = static_cast<std::size_t>(choice);
  switch (kind) {
  case KnobKind::Split:
    return fmt::format("[{}]", fmt::join(splits.at(c), ", "));
  case KnobKind::Reorder:
    return fmt::format("[{}]", fmt::join(orders.at(c), ", "));
  case KnobKind::Annotate:
    return annotations.at(c);
  case KnobKind::Other:
    return std::to_string(values.at(c));
  }
  return "";
}

void ConfigSpace::add(Knob knob) {
  KILN_ASSERT(find(knob.name) < 0, "knob " + knob.name + " is defined twice");
  // A knob without choices would make the space empty: a template bug.
  KILN_ASSERT(knob.size() > 0, "knob " + knob.name + " has no choices");
  knobs_.push_back(std::move(knob));
}

void ConfigSpace::define_split(std::string name, std::int64_t extent, int parts,
                               std::int64_t max_innermost) {
  Knob k;
  k.name = std::move(name);
  k.kind = KnobKind::Split;
  k.splits = factorizations(extent, parts, max_innermost > 0 ? max_innermost : extent);
  add(std::move(k));
}

void ConfigSpace::define_reorder(std::string name,
                                 std::vector<std::vector<std::string>> candidates) {
  Knob k;
  k.name = std::move(name);
  k.kind = KnobKind::Reorder;
  k.orders = std::move(candidates);
  add(std::move(k));
}

void ConfigSpace::define_annotate(std::string name, std::vector<std::string> choices) {
  Knob k;
  k.name = std::move(name);
  k.kind = KnobKind::Annotate;
  k.annotations = std::move(choices);
  add(std::move(k));
}

void ConfigSpace::define_knob(std::string name, std::vector<std::int64_t> values) {
  Knob k;
  k.name = std::move(name);
  k.kind = KnobKind::Other;
  k.values = std::move(values);
  add(std::move(k));
}

int ConfigSpace::find(std::string_view name) const {
  for (std::size_t i = 0; i < knobs_.size(); ++i)
    if (knobs_[i].name == name)
      return static_cast<int>(i);
  return -1;
}

std::optional<std::uint64_t> ConfigSpace::size() const {
  std::uint64_t n = 1;
  for (const Knob& k : knobs_)
    if (__builtin_mul_overflow(n, k.size(), &n))
      return std::nullopt;
  return n;
}

KnobConfig ConfigSpace::at(std::uint64_t index) const {
  KnobConfig c;
  for (const Knob& k : knobs_) {
    c.push_back(static_cast<std::int64_t>(index % k.size()));
    index /= k.size();
  }
  return c;
}

std::uint64_t ConfigSpace::index_of(const KnobConfig& config) const {
  std::uint64_t index = 0;
  for (std::size_t i = knobs_.size(); i-- > 0;)
    index = index * knobs_[i].size() + static_cast<std::uint64_t>(config.at(i));
  return index;
}

bool ConfigSpace::valid(const KnobConfig& config) const {
  if (config.size() != knobs_.size())
    return false;
  for (std::size_t i = 0; i < knobs_.size(); ++i)
    if (config[i] < 0 || static_cast<std::uint64_t>(config[i]) >= knobs_[i].size())
      return false;
  return true;
}

static std::int64_t draw(std::uint64_t n, std::mt19937_64& rng) {
  return static_cast<std::int64_t>(std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng));
}

KnobConfig ConfigSpace::sample(std::mt19937_64& rng) const {
  KnobConfig c;
  for (const Knob& k : knobs_)
    c.push_back(draw(k.size(), rng));
  return c;
}

KnobConfig ConfigSpace::mutate(const KnobConfig& config, std::mt19937_64& rng) const {
  if (!valid(config))
    return sample(rng);
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < knobs_.size(); ++i)
    if (knobs_[i].size() > 1)
      open.push_back(i);
  KnobConfig c = config;
  if (open.empty())
    return c; // a space of one config has no neighbour
  std::size_t i = open[static_cast<std::size_t>(draw(open.size(), rng))];
  // A different choice, uniform among the others.
  std::int64_t next = draw(knobs_[i].size() - 1, rng);
  c[i] = next >= c[i] ? next + 1 : next;
  return c;
}

std::vector<std::pair<int, KnobConfig>> ConfigSpace::neighbours(const KnobConfig& config) const {
  std::vector<std::pair<int, KnobConfig>> out;
  if (!valid(config))
    return out;
  for (std::size_t i = 0; i < knobs_.size(); ++i)
    for (std::int64_t choice = 0; choice < static_cast<std::int64_t>(knobs_[i].size()); ++choice)
      if (choice != config[i]) {
        KnobConfig c = config;
        c[i] = choice;
        out.emplace_back(static_cast<int>(i), std::move(c));
      }
  return out;
}

KnobConfig ConfigSpace::crossover(const KnobConfig& a, const KnobConfig& b,
                                  std::mt19937_64& rng) const {
  if (!valid(a) || !valid(b) || knobs_.size() < 2)
    return a;
  std::size_t cut = 1 + static_cast<std::size_t>(draw(knobs_.size() - 1, rng));
  KnobConfig c(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(cut));
  c.insert(c.end(), b.begin() + static_cast<std::ptrdiff_t>(cut), b.end());
  return c;
}

std::string ConfigSpace::describe(const KnobConfig& config) const {
  std::string s;
  for (std::size_t i = 0; i < knobs_.size() && i < config.size(); ++i)
    s += fmt::format("{}{}={}", i ? " " : "", knobs_[i].name, knobs_[i].choice_text(config[i]));
  return s;
}

std::string ConfigSpace::describe() const {
  std::string s;
  for (const Knob& k : knobs_) {
    s += fmt::format("  {:<16} {:<8} {:>6} choices", k.name, knob_kind_name(k.kind), k.size());
    if (k.kind != KnobKind::Split || k.size() <= 4) {
      std::vector<std::string> choices;
      for (std::uint64_t c = 0; c < k.size(); ++c)
        choices.push_back(k.choice_text(static_cast<std::int64_t>(c)));
      s += fmt::format(": {}", fmt::join(choices, " | "));
    } else {
      s += fmt::format(": {} … {}", k.choice_text(0),
                       k.choice_text(static_cast<std::int64_t>(k.size() - 1)));
    }
    s += "\n";
  }
  return s;
}

ConfigView::ConfigView(const ConfigSpace& space, const KnobConfig& config)
    : space_(space), config_(config) {
  KILN_ASSERT(space.valid(config), "a config outside its space reached a template");
}

const Knob& ConfigView::knob(std::string_view name, KnobKind kind, std::int64_t& choice) const {
  int i = space_.find(name);
  KILN_ASSERT(i >= 0, "the template reads knob " + std::string(name) + ", which it never defined");
  const Knob& k = space_.knobs()[static_cast<std::size_t>(i)];
  KILN_ASSERT(k.kind == kind, "knob " + std::string(name) + " is read as another kind");
  choice = config_[static_cast<std::size_t>(i)];
  return k;
}

const std::vector<std::int64_t>& ConfigView::split(std::string_view name) const {
  std::int64_t c = 0;
  return knob(name, KnobKind::Split, c).splits[static_cast<std::size_t>(c)];
}

const std::vector<std::string>& ConfigView::order(std::string_view name) const {
  std::int64_t c = 0;
  return knob(name, KnobKind::Reorder, c).orders[static_cast<std::size_t>(c)];
}

const std::string& ConfigView::annotation(std::string_view name) const {
  std::int64_t c = 0;
  return knob(name, KnobKind::Annotate, c).annotations[static_cast<std::size_t>(c)];
}

std::int64_t ConfigView::value(std::string_view name) const {
  std::int64_t c = 0;
  return knob(name, KnobKind::Other, c).values[static_cast<std::size_t>(c)];
}

} // namespace kiln::space
