// Records of random sketch configs, as if a run had tuned a task: for tests
// of what is built from a log (the nearest-shape start).
#ifndef KILN_TEST_UNIT_SEARCH_RANDOM_RECORDS_H
#define KILN_TEST_UNIT_SEARCH_RANDOM_RECORDS_H

#include "kiln/codegen/target.h"
#include "kiln/record/record.h"
#include "kiln/search/search_space.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

namespace kiln::test {

/// `count` records of random sketch configs of `dag` measured on this
/// machine, the i-th timed (i + 1) ms × `scale`, so the first is the best.
inline std::vector<record::Record> random_records(const ir::ComputeDAG& dag, int count,
                                                  std::uint64_t seed, double scale = 1,
                                                  const std::string& source = "ops/matmul.kop") {
  auto space = search::make_search_space(dag, codegen::host_target(), "sketch", "");
  REQUIRE(space.ok());
  std::mt19937_64 rng(seed);
  std::vector<record::Record> out;
  while (static_cast<int>(out.size()) < count) {
    auto state = (*space)->state((*space)->sample(rng));
    if (!state)
      continue;
    record::Record r;
    r.run = "online/evolutionary/seed=1";
    r.task = record::TaskInfo::from_dag(dag, source);
    r.target = codegen::host_target();
    r.config.steps = state->steps();
    r.result.costs = {1e-3 * scale * static_cast<double>(out.size() + 1)};
    r.result.number = 1;
    r.trial = static_cast<std::int64_t>(out.size());
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_SEARCH_RANDOM_RECORDS_H
