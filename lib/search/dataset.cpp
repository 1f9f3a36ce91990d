#include "kiln/search/dataset.h"

#include "kiln/measure/replay.h"
#include "kiln/schedule/lower.h"
#include "kiln/search/search_space.h"
#include "kiln/support/version.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unordered_set>

namespace kiln::search {

std::vector<model::Sample> samples_from_records(const std::vector<measure::Record>& records,
                                                std::vector<std::string>* warnings) {
  // A label compares a config with the best of its task measured on the
  // same machine: the same task logged on two machines is two groups (a
  // config timed on a faster CPU is not a better config).
  std::unordered_set<std::string> cpus;
  for (const measure::Record& r : records)
    cpus.insert(r.target.cpu);
  auto group = [&](const measure::Record& r) {
    return cpus.size() > 1 ? r.task.workload_key + "@" + r.target.cpu : r.task.workload_key;
  };
  std::map<std::string, double> best; // per group
  for (const measure::Record& r : records)
    if (r.result.ok()) {
      double& b = best[group(r)];
      b = b == 0 ? r.result.median() : std::min(b, r.result.median());
    }
  std::map<std::string, std::optional<ir::ComputeDAG>> dags;
  std::vector<model::Sample> samples;
  for (const measure::Record& r : records) {
    if (r.config.steps.empty() && !r.config.template_name.empty())
      continue; // an old template record: knobs alone, no steps to learn from
    auto& dag = dags[r.task.workload_key];
    if (!dag) {
      auto d = measure::dag_of(r);
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
    model::Sample s;
    s.features = model::extract_features(schedule::lower(*state, {.expand_unrolled = false}));
    s.task = group(r);
    s.label = r.result.ok() ? best[s.task] / r.result.median() : 0.0;
    samples.push_back(std::move(s));
  }
  return samples;
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

std::optional<Error> collect_dataset(const std::vector<std::string>& op_files,
                                     const Target& target, const DatasetOptions& options,
                                     const std::vector<measure::Record>& existing,
                                     measure::LogWriter& log,
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
  std::unordered_set<std::string> done;
  for (const measure::Record& r : existing)
    done.insert(r.task.workload_key + "|" + r.config.key());

  space::SpaceParams params = space_params(target);
  for (size_t t = 0; t < tasks.size(); ++t) {
    const auto& [file, dag] = tasks[t];
    DatasetProgress p{fmt::format("{} ({})", dag.name(), shape_text(dag)), static_cast<int>(t) + 1,
                      static_cast<int>(tasks.size()), 0, 0};
    // The same seed per task: a resumed run draws the same configs again
    // and skips the ones already measured.
    std::mt19937_64 rng(options.seed ^ std::hash<std::string>()(dag.workload_key()));
    SketchSearchSpace space(dag, params);
    std::vector<measure::Config> todo;
    std::unordered_set<std::string> drawn;
    for (int i = 0; i < options.samples; ++i) {
      measure::Config c = space.config(space.sample(rng));
      if (!drawn.insert(c.key()).second)
        continue;
      if (done.count(dag.workload_key() + "|" + c.key())) {
        ++p.skipped;
        continue;
      }
      todo.push_back(std::move(c));
    }
    if (todo.empty()) {
      if (progress)
        progress(p);
      continue;
    }
    auto measurer = measure::ProgramMeasurer::create(dag, target, options.measure);
    if (!measurer)
      return measurer.error();
    measure::TaskInfo info = measure::TaskInfo::from_dag(dag, file);
    const size_t batch = 16;
    for (size_t at = 0; at < todo.size(); at += batch) {
      std::vector<measure::Config> configs(todo.begin() + at,
                                           todo.begin() + std::min(todo.size(), at + batch));
      std::vector<measure::MeasureResult> results = (*measurer)->measure(configs);
      std::vector<measure::Record> records;
      for (size_t i = 0; i < configs.size(); ++i) {
        measure::Record r;
        r.run = "dataset";
        r.task = info;
        r.target = target;
        r.config = configs[i];
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

Split split_unseen_shapes(const std::vector<measure::Record>& records) {
  // Tasks of each op, by size: flops, then the product of the parameters,
  // since ops without float arithmetic (transpose) have 0 flops at every
  // shape and keying by flops alone merged their tasks into one, which was
  // then never held out.
  std::map<std::string, std::map<std::tuple<double, double, std::string>, std::string>> tasks;
  for (const measure::Record& r : records) {
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
  for (const measure::Record& r : records)
    (held.count(r.task.workload_key) ? s.test : s.train).push_back(r);
  return s;
}

Split split_unseen_ops(const std::vector<measure::Record>& records,
                       const std::vector<std::string>& ops) {
  Split s;
  for (const measure::Record& r : records) {
    bool held = std::find(ops.begin(), ops.end(), r.task.op_name) != ops.end();
    (held ? s.test : s.train).push_back(r);
  }
  return s;
}

Evaluation evaluate(model::CostModel& model, const std::vector<model::Sample>& samples) {
  std::vector<model::ProgramFeatures> programs;
  for (const model::Sample& s : samples)
    programs.push_back(s.features);
  std::vector<double> scores = model.predict(programs);
  std::vector<model::Scored> scored;
  std::unordered_set<std::string> tasks;
  for (size_t i = 0; i < samples.size(); ++i) {
    scored.push_back({samples[i].task, scores[i], samples[i].label});
    tasks.insert(samples[i].task);
  }
  Evaluation e;
  e.programs = static_cast<int>(samples.size());
  e.tasks = static_cast<int>(tasks.size());
  e.pairwise = model::pairwise_accuracy(scored);
  e.pairwise_gap = model::pairwise_accuracy(scored, Evaluation::kNoiseGap);
  e.pairwise_task_mean = model::pairwise_accuracy_per_task(scored).mean;
  model::PerTaskPairwise per_task =
      model::pairwise_accuracy_per_task(scored, Evaluation::kNoiseGap);
  e.pairwise_task_mean_gap = per_task.mean;
  e.pairwise_per_task = per_task.per_task;
  model::TopKScore t1 = model::top_k_score(scored, 1), t5 = model::top_k_score(scored, 5);
  e.top1 = t1.mean;
  e.top5 = t5.mean;
  e.top1_per_task = t1.per_task;
  return e;
}

std::string Evaluation::describe() const {
  std::string out = fmt::format(
      "{} programs of {} tasks: pairwise accuracy {:.3f}, top-1 {:.3f}, top-5 {:.3f}\n"
      "  pairwise without near-ties (labels within {:.0f}%): {:.3f}; mean per task {:.3f} "
      "({:.3f} without near-ties)\n",
      programs, tasks, pairwise, top1, top5, kNoiseGap * 100, pairwise_gap, pairwise_task_mean,
      pairwise_task_mean_gap);
  // Both lists are in task name order; a task without a valid best has no
  // top-1 entry.
  std::map<std::string, double> pairwise_of(pairwise_per_task.begin(), pairwise_per_task.end());
  for (const auto& [task, score] : top1_per_task) {
    auto p = pairwise_of.find(task);
    out += p == pairwise_of.end()
               ? fmt::format("  {:<34} top-1 {:.3f}\n", task, score)
               : fmt::format("  {:<34} top-1 {:.3f}  pairwise {:.3f}\n", task, score, p->second);
  }
  return out;
}

} // namespace kiln::search
