#include "kiln/record/history.h"

#include <algorithm>
#include <map>
#include <optional>

namespace kiln::record {

const char* target_match_name(TargetMatch match) {
  switch (match) {
  case TargetMatch::Exact:
    return "exact CPU";
  case TargetMatch::SameFamily:
    return "same family";
  case TargetMatch::Any:
    return "another CPU";
  }
  return "?";
}

TargetMatch target_match(const Target& have, const Target& want) {
  if (have.triple == want.triple && have.cpu == want.cpu)
    return TargetMatch::Exact;
  if (have.arch() == want.arch() && have.vector_bits == want.vector_bits)
    return TargetMatch::SameFamily;
  return TargetMatch::Any;
}

/// The valid records grouped by program, in order of the programs' first
/// records, each group sorted fastest first. A record whose program is not
/// known (Config::program) is left out: it cannot be rebuilt.
static std::vector<std::vector<const Record*>>
config_groups(const std::vector<const Record*>& records) {
  std::map<schedule::ProgramKey, size_t> index;
  std::vector<std::vector<const Record*>> groups;
  for (const Record* r : records) {
    std::optional<schedule::ProgramKey> program = r->config.program();
    if (!r->result.ok() || !program)
      continue;
    auto [it, fresh] = index.try_emplace(*program, groups.size());
    if (fresh)
      groups.emplace_back();
    groups[it->second].push_back(r);
  }
  for (std::vector<const Record*>& g : groups)
    std::stable_sort(g.begin(), g.end(), [](const Record* a, const Record* b) {
      return a->result.median() < b->result.median();
    });
  return groups;
}

static const Record* median_of(const std::vector<const Record*>& group) {
  return group[(group.size() - 1) / 2];
}

std::vector<const Record*> config_medians(const std::vector<const Record*>& records) {
  std::vector<const Record*> out;
  for (const std::vector<const Record*>& g : config_groups(records))
    out.push_back(median_of(g));
  return out;
}

std::vector<const Record*> ranked_configs(const std::vector<const Record*>& records) {
  std::vector<std::pair<bool, const Record*>> judged; // (timed once, its median record)
  for (const std::vector<const Record*>& g : config_groups(records))
    judged.emplace_back(g.size() == 1, median_of(g));
  std::stable_sort(judged.begin(), judged.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first)
      return b.first; // timed more than once first
    return a.second->result.median() < b.second->result.median();
  });
  std::vector<const Record*> out;
  for (const auto& [once, r] : judged)
    out.push_back(r);
  return out;
}

/// The best config of some records of one task: the first of ranked_configs.
static const Record* fastest_config(const std::vector<const Record*>& records) {
  std::vector<const Record*> ranked = ranked_configs(records);
  return ranked.empty() ? nullptr : ranked.front();
}

const Record* history_best(const std::vector<Record>& records, const std::string& workload_key,
                           const Target& target, TargetMatch* matched) {
  std::vector<const Record*> by_match[3];
  for (const Record& r : records)
    if (r.task.workload_key == workload_key && r.result.ok())
      by_match[static_cast<int>(target_match(r.target, target))].push_back(&r);
  for (int m = 0; m < 3; ++m)
    if (const Record* best = fastest_config(by_match[m])) {
      if (matched)
        *matched = static_cast<TargetMatch>(m);
      return best;
    }
  return nullptr;
}

std::vector<const Record*> best_per_task(const std::vector<Record>& records) {
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::vector<const Record*>> tasks;
  for (const Record& r : records) {
    if (!r.result.ok())
      continue;
    auto key = std::make_pair(r.task.workload_key, r.target.triple + "/" + r.target.cpu);
    auto [it, fresh] = index.try_emplace(key, tasks.size());
    if (fresh)
      tasks.emplace_back();
    tasks[it->second].push_back(&r);
  }
  std::vector<const Record*> best;
  for (const std::vector<const Record*>& t : tasks)
    best.push_back(fastest_config(t));
  return best;
}

} // namespace kiln::record
