// What a search strategy explores: points (vectors of integers) with
// sampling, mutation and crossover, each mapping to a measurable config.
// Sketches (Ansor) and templates (AutoTVM) both sit behind this interface.
#ifndef KILN_SEARCH_SEARCH_SPACE_H
#define KILN_SEARCH_SEARCH_SPACE_H

#include "kiln/record/record.h"
#include "kiln/schedule/program_key.h"
#include "kiln/schedule/state.h"
#include "kiln/space/sketch.h"
#include "kiln/space/space_params.h"
#include "kiln/space/templates.h"
#include "kiln/support/target.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <vector>

namespace kiln::search {

using Point = std::vector<std::int64_t>;

class SearchSpace {
public:
  virtual ~SearchSpace() = default;
  virtual std::string name() const = 0;
  /// The DAG the space schedules.
  virtual const ir::ComputeDAG& dag() const = 0;
  virtual Point sample(std::mt19937_64& rng) const = 0;
  /// One small random change.
  virtual Point mutate(const Point& p, std::mt19937_64& rng) const = 0;
  /// Every point one mutation away, each with the index of the decision it
  /// changes (a tile axis, a plan's annotation, a knob).
  virtual std::vector<std::pair<int, Point>> neighbours(const Point&) const { return {}; }
  /// A child mixing two parents (may return `a` when they cannot mix).
  virtual Point crossover(const Point& a, const Point& b, std::mt19937_64& rng) const = 0;
  /// The steps of a point; an Error when the numbers are not a point of
  /// this space.
  virtual Expected<std::vector<schedule::Step>> steps(const Point& p) const = 0;
  /// The schedule of a point: its steps replayed on the DAG (a space may
  /// start from a state it made once for many points).
  virtual Expected<schedule::State> state(const Point& p) const = 0;
  /// The config recorded for a point: its steps, and the space's own view
  /// of it (the point, a template's knobs).
  virtual record::Config config(const Point& p) const = 0;
  /// The point of a logged config, when it belongs to this space.
  virtual std::optional<Point> point_of(const record::Config& c) const = 0;
  /// Points fall into families of one structure each: a sketch space's
  /// sketches. Strategies evolve each family on its own and keep measuring
  /// every family still in the race (strategy.h). A template space is one.
  virtual int families() const { return 1; }
  virtual int family(const Point&) const { return 0; }
  /// A random point of one family.
  virtual Point sample_family(int, std::mt19937_64& rng) const { return sample(rng); }
  /// Number of points when the space can be enumerated (grid search).
  virtual std::optional<std::uint64_t> size() const { return std::nullopt; }
  /// The point at an index in [0, size()).
  virtual Point at(std::uint64_t) const { return {}; }

  /// The identity of a point's program (schedule/program_key.h); nullopt
  /// when the point does not build.
  std::optional<schedule::ProgramKey> key(const Point& p) const;
};

/// The Ansor-style space of a DAG's sketches.
class SketchSearchSpace : public SearchSpace {
public:
  SketchSearchSpace(const ir::ComputeDAG& dag, const space::SpaceParams& params)
      : space_(dag, params) {}

  std::string name() const override { return "sketch"; }
  const ir::ComputeDAG& dag() const override { return space_.dag(); }
  Point sample(std::mt19937_64& rng) const override;
  Point mutate(const Point& p, std::mt19937_64& rng) const override;
  std::vector<std::pair<int, Point>> neighbours(const Point& p) const override;
  Point crossover(const Point& a, const Point& b, std::mt19937_64& rng) const override;
  Expected<std::vector<schedule::Step>> steps(const Point& p) const override;
  Expected<schedule::State> state(const Point& p) const override;
  record::Config config(const Point& p) const override;
  std::optional<Point> point_of(const record::Config& c) const override;
  int families() const override { return static_cast<int>(space_.sketches().size()); }
  int family(const Point& p) const override;
  Point sample_family(int sketch, std::mt19937_64& rng) const override;
  const space::SketchSpace& sketches() const { return space_; }

private:
  space::SketchSpace space_;
};

/// The AutoTVM-style space of a template's knobs. A point is one choice
/// index per knob; the space is enumerable, so grid search walks it in
/// AutoTVM's order (first knob fastest). Its configs carry the template's
/// steps, its name and the knob choices.
class TemplateSearchSpace : public SearchSpace {
public:
  explicit TemplateSearchSpace(std::unique_ptr<space::Template> t) : template_(std::move(t)) {}

  std::string name() const override { return "template"; }
  const ir::ComputeDAG& dag() const override { return template_->dag(); }
  Point sample(std::mt19937_64& rng) const override;
  Point mutate(const Point& p, std::mt19937_64& rng) const override;
  std::vector<std::pair<int, Point>> neighbours(const Point& p) const override;
  Point crossover(const Point& a, const Point& b, std::mt19937_64& rng) const override;
  Expected<std::vector<schedule::Step>> steps(const Point& p) const override;
  Expected<schedule::State> state(const Point& p) const override;
  record::Config config(const Point& p) const override;
  std::optional<Point> point_of(const record::Config& c) const override;
  std::optional<std::uint64_t> size() const override;
  Point at(std::uint64_t index) const override;
  const space::Template& templ() const { return *template_; }

private:
  std::unique_ptr<space::Template> template_;
};

/// The space `kiln tune --space NAME [--template T]` names: "sketch" (the
/// default when both are empty), or "template" with the named template or,
/// when `template_name` is empty, the one that fits the DAG. An Error when
/// they contradict each other or no template fits.
Expected<std::unique_ptr<SearchSpace>> make_search_space(const ir::ComputeDAG& dag,
                                                         const Target& target,
                                                         const std::string& space_name,
                                                         const std::string& template_name);

} // namespace kiln::search

#endif
