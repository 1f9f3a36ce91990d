// What a strategy works with: the space, the cost model, the measured
// programs, and the model's scores of points (features cached per program).
// Programs are told apart by their key (schedule/program_key.h), never by
// their points: two points that make the same program are one candidate.
#ifndef KILN_SEARCH_SEARCH_CONTEXT_H
#define KILN_SEARCH_SEARCH_CONTEXT_H

#include "kiln/model/cost_model.h"
#include "kiln/model/hardware.h"
#include "kiln/schedule/program_key.h"
#include "kiln/search/search_space.h"

#include <cstdint>
#include <optional>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::search {

using ProgramSet = std::unordered_set<schedule::ProgramKey, schedule::ProgramKeyHash>;

/// A measured point, as strategies see it.
struct MeasuredPoint {
  Point point;
  double throughput = 0; ///< 1 / seconds; 0 for an error
};

class SearchContext {
public:
  /// `hardware`: the machine the programs run on (model/hardware.h).
  SearchContext(const SearchSpace& space, model::CostModel& model, std::mt19937_64& rng,
                const model::Hardware& hardware)
      : space(space), model(model), rng(rng), hardware(hardware) {}

  /// Threads predict() extracts features on: the cores, at most 2 (more
  /// would contend with measuring on a small machine).
  static unsigned feature_threads();

  const SearchSpace& space;
  model::CostModel& model;
  std::mt19937_64& rng;
  const model::Hardware hardware;
  std::vector<MeasuredPoint> measured;
  ProgramSet measured_programs; ///< measured, or otherwise never to propose
  std::int64_t predictions = 0; ///< programs scored so far

  /// The program of a point; nullopt when the point does not build.
  std::optional<schedule::ProgramKey> key(const Point& p);
  /// Whether the point's program was measured. A point that does not build
  /// counts as measured: it is never worth proposing.
  bool is_measured(const Point& p);
  /// Model scores; points that do not build score -inf.
  std::vector<double> predict(const std::vector<Point>& points);
  /// The features of a point's program (empty rows when it does not build).
  const model::ProgramFeatures& features(const Point& p);
  /// `n` random points of distinct unmeasured programs (fewer if the space
  /// runs out), none in `exclude`, of one family when `family` >= 0.
  std::vector<Point> random_unmeasured(int n, const ProgramSet& exclude = {}, int family = -1);

private:
  struct PointHash {
    std::size_t operator()(const Point& p) const;
  };
  std::unordered_map<schedule::ProgramKey, model::ProgramFeatures, schedule::ProgramKeyHash>
      feature_cache_;
  /// Points to their programs: deriving a key builds the point's steps.
  std::unordered_map<Point, std::optional<schedule::ProgramKey>, PointHash> key_cache_;
};

} // namespace kiln::search

#endif // KILN_SEARCH_SEARCH_CONTEXT_H
