#include "kiln/search/dataset.h"

#include "kiln/model/program_features.h"
#include "kiln/search/search_space.h"
#include "kiln/support/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_set>

namespace kiln::search {

std::vector<model::Sample> samples_from_records(const std::vector<record::Record>& records,
                                                std::vector<std::string>* warnings) {
  // A label compares a config with the best of its task measured on the
  // same machine: the same task logged on two machines is two groups (a
  // config timed on a faster CPU is not a better config).
  std::unordered_set<std::string> cpus;
  for (const record::Record& r : records)
    cpus.insert(r.target.cpu);
  auto group = [&](const record::Record& r) {
    return cpus.size() > 1 ? r.task.workload_key + "@" + r.target.cpu : r.task.workload_key;
  };
  // The samples in an order of their own, not the files': training draws
  // rows and pairs in sample order, so the same records given in another
  // order (files swapped, a log merged differently) must train the same
  // model and score the same figures.
  struct Keyed {
    std::string key;
    const record::Record* record;
  };
  std::vector<Keyed> ordered;
  ordered.reserve(records.size());
  for (const record::Record& r : records) {
    std::string knobs;
    for (const auto& [name, choice] : r.config.knobs)
      knobs += fmt::format("{}={};", name, choice);
    ordered.push_back(
        {fmt::format("{}\n{}\n{}\n{}\n{}", r.task.workload_key, r.target.cpu,
                     schedule::steps_to_json(r.config.steps), r.config.template_name, knobs),
         &r});
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const Keyed& a, const Keyed& b) {
    if (a.key != b.key)
      return a.key < b.key;
    // The same program measured twice: by its time, then its trial.
    const double ta = a.record->result.ok() ? a.record->result.median() : 0;
    const double tb = b.record->result.ok() ? b.record->result.median() : 0;
    if (ta != tb)
      return ta < tb;
    return a.record->trial < b.record->trial;
  });
  std::map<std::string, std::optional<ir::ComputeDAG>> dags;
  std::vector<model::Measured> measured;
  measured.reserve(records.size());
  for (const Keyed& keyed : ordered) {
    const record::Record& r = *keyed.record;
    model::Measured& m = measured.emplace_back();
    m.seconds = r.result.ok() ? r.result.median() : 0;
    m.group = group(r);
    if (!r.config.program())
      continue; // a template record of knobs alone: no steps to learn from
    auto& dag = dags[r.task.workload_key];
    if (!dag) {
      auto d = record::task_dag(r.task);
      if (!d) {
        if (warnings)
          warnings->push_back(d.error().message());
        dags.erase(r.task.workload_key);
        continue;
      }
      dag = std::move(*d);
    }
    auto state = schedule::State::replay(*dag, r.config.steps);
    if (!state) {
      if (warnings)
        warnings->push_back(fmt::format("trial {} of {}: {}", r.trial, r.task.workload_key,
                                        state.error().message()));
      continue;
    }
    m.features = model::program_features(*state, model::hardware_of(r.target));
  }
  return model::label_samples(measured);
}

measure::MeasureOptions dataset_measure_options() {
  measure::MeasureOptions o;
  o.runner.timing.repeat = 5;
  o.runner.timing.min_repeat_ms = 25;
  return o;
}

std::vector<ir::ParamOverrides> dataset_shapes(const std::vector<ir::ParamDecl>& params) {
  // Scales in eighths, largest first after the defaults. 3/4 and 3/8 give
  // sizes that are not powers of two (384, 42), whose tiles leave tails.
  std::vector<ir::ParamOverrides> shapes{{}};
  for (std::int64_t eighths : {6, 4, 3, 2}) {
    ir::ParamOverrides o;
    for (const ir::ParamDecl& p : params)
      if (!p.derived && p.default_value >= 8)
        o.emplace_back(p.name,
                       std::to_string(std::max<std::int64_t>(1, p.default_value * eighths / 8)));
    if (!o.empty())
      shapes.push_back(o);
  }
  return shapes;
}

static std::string shape_text(const ir::ComputeDAG& dag) {
  std::string s;
  for (const ir::Param& p : dag.params())
    s += fmt::format("{}{}={}", s.empty() ? "" : " ", p.name, p.value);
  return s;
}

std::optional<Error> collect_dataset(const std::vector<std::string>& op_files, const Target& target,
                                     const DatasetOptions& options,
                                     const std::vector<record::Record>& existing,
                                     record::LogWriter& log,
                                     const std::function<void(const DatasetProgress&)>& progress) {
  // Every task first, so progress can say "task 3 of 27".
  std::vector<std::pair<std::string, ir::ComputeDAG>> tasks;
  for (const std::string& file : op_files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    auto params = ir::parse_op_params(text.str(), file);
    if (!params)
      return params.error();
    for (const ir::ParamOverrides& shape : dataset_shapes(*params)) {
      auto dag = ir::parse_op_file(file, shape);
      if (!dag)
        return dag.error();
      if (dag->flop_count() <= options.max_flops)
        tasks.emplace_back(file, std::move(*dag));
    }
  }
  std::set<std::pair<std::string, schedule::ProgramKey>> done;
  for (const record::Record& r : existing)
    if (auto program = r.config.program())
      done.emplace(r.task.workload_key, *program);

  space::SpaceParams params = space::space_params(target);
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto& [file, dag] = tasks[t];
    DatasetProgress p{fmt::format("{} ({})", dag.name(), shape_text(dag)), static_cast<int>(t) + 1,
                      static_cast<int>(tasks.size()), 0, 0};
    // The same seed per task: a resumed run draws the same configs again
    // and skips the ones already measured.
    std::mt19937_64 rng(options.seed ^ std::hash<std::string>()(dag.workload_key()));
    SketchSearchSpace space(dag, params);
    std::vector<Point> todo;
    std::set<schedule::ProgramKey> drawn;
    for (int i = 0; i < options.samples; ++i) {
      Point point = space.sample(rng);
      std::optional<schedule::ProgramKey> key = space.key(point);
      if (!key || !drawn.insert(*key).second)
        continue;
      if (done.count({dag.workload_key(), *key})) {
        ++p.skipped;
        continue;
      }
      todo.push_back(std::move(point));
    }
    if (todo.empty()) {
      if (progress)
        progress(p);
      continue;
    }
    auto measurer = measure::ProgramMeasurer::create(dag, target, options.measure);
    if (!measurer)
      return measurer.error();
    record::TaskInfo info = record::TaskInfo::from_dag(dag, file);
    const size_t batch = 16;
    for (size_t at = 0; at < todo.size(); at += batch) {
      std::vector<schedule::State> states;
      std::vector<record::Config> configs;
      for (size_t i = at; i < std::min(todo.size(), at + batch); ++i) {
        auto state = space.state(todo[i]);
        KILN_ASSERT(state.ok(), "a sampled sketch config does not build");
        states.push_back(std::move(*state));
        configs.push_back(space.config(todo[i]));
      }
      std::vector<record::MeasureResult> results = (*measurer)->measure(states);
      std::vector<record::Record> records;
      for (size_t i = 0; i < configs.size(); ++i) {
        record::Record r;
        r.run = "dataset";
        r.task = info;
        r.target = target;
        r.config = std::move(configs[i]);
        r.result = results[i];
        r.trial = static_cast<std::int64_t>(at + i);
        r.timestamp =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        r.kiln_version = version();
        records.push_back(std::move(r));
      }
      if (auto err = log.append(records))
        return err;
      p.measured += static_cast<std::int64_t>(records.size());
      if (progress)
        progress(p);
    }
  }
  return std::nullopt;
}

Split split_unseen_shapes(const std::vector<record::Record>& records) {
  // Tasks of each op, by size: flops, then the product of the parameters,
  // since ops without float arithmetic (transpose) have 0 flops at every
  // shape and keying by flops alone merged their tasks into one, which was
  // then never held out.
  std::map<std::string, std::map<std::tuple<double, double, std::string>, std::string>> tasks;
  for (const record::Record& r : records) {
    double size = 1;
    for (const ir::Param& p : r.task.params)
      size *= static_cast<double>(std::max<std::int64_t>(1, p.value));
    tasks[r.task.op_name][{r.task.flops, size, r.task.workload_key}] = r.task.workload_key;
  }
  std::unordered_set<std::string> held;
  for (const auto& [op, by_size] : tasks) {
    if (by_size.size() < 2)
      continue;
    auto mid = by_size.begin();
    std::advance(mid, by_size.size() / 2);
    held.insert(mid->second);
  }
  Split s;
  for (const record::Record& r : records)
    (held.count(r.task.workload_key) ? s.test : s.train).push_back(r);
  return s;
}

Split split_unseen_cpu(const std::vector<record::Record>& records, const std::string& cpu) {
  Split s;
  for (const record::Record& r : records)
    (r.target.cpu == cpu ? s.test : s.train).push_back(r);
  return s;
}

std::vector<std::string> record_cpus(const std::vector<record::Record>& records) {
  std::set<std::string> cpus;
  for (const record::Record& r : records)
    cpus.insert(r.target.cpu);
  return {cpus.begin(), cpus.end()};
}

Split split_unseen_ops(const std::vector<record::Record>& records,
                       const std::vector<std::string>& ops) {
  Split s;
  for (const record::Record& r : records) {
    bool held = std::find(ops.begin(), ops.end(), r.task.op_name) != ops.end();
    (held ? s.test : s.train).push_back(r);
  }
  return s;
}

} // namespace kiln::search
