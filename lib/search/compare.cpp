#include "kiln/model/evaluation.h"
#include "kiln/search/dataset.h"
#include "kiln/search/session.h"

namespace kiln::search {

/// The mean model accuracy over the rounds a model scored (-1: none).
static double mean_accuracy(const TuneResult& r) {
  double sum = 0;
  int n = 0;
  for (const RoundStats& s : r.rounds)
    if (s.model_accuracy >= 0) {
      sum += s.model_accuracy;
      ++n;
    }
  return n ? sum / n : -1;
}

Expected<Comparison> compare_modes(const ir::ComputeDAG& dag, const Target& target,
                                   const SessionOptions& options,
                                   const std::function<void(Mode)>& on_mode) {
  if (auto err = check_options(options))
    return *err;
  auto pretrained = load_pretrained_model(options.model_file, options.default_model);
  if (!pretrained)
    return pretrained.error();
  pretrained->keep_as_prior();
  auto measurer = measure::ProgramMeasurer::create(dag, target, options.measure);
  if (!measurer)
    return measurer.error();
  auto space = make_search_space(dag, target, options.space, options.template_name);
  if (!space)
    return space.error();
  if (auto err = check_strategy_fits(options.tune.strategy, **space))
    return *err;
  Comparison out;
  out.log = options.log.empty() ? dag.name() + ".compare.jsonl" : options.log;
  auto writer = record::LogWriter::open(out.log);
  if (!writer)
    return writer.error();

  for (Mode mode : {Mode::Online, Mode::Offline, Mode::Hybrid}) {
    TuneOptions o = options.tune;
    o.mode = mode;
    o.run = "";
    model::XGBoostModel fresh(model::online_training_params());
    model::CostModel& m =
        mode == Mode::Online ? static_cast<model::CostModel&>(fresh) : *pretrained;
    Tuner tuner({options.source, target, writer->get()}, **space, **measurer, m, o);
    if (on_mode)
      on_mode(mode);
    auto result = tuner.run();
    if (!result)
      return result.error();
    ModeRun run{mode, std::move(*result), -1};
    run.accuracy = mean_accuracy(run.result);
    out.runs.push_back(std::move(run));
  }
  // The pretrained model judged on what the online run measured: an honest
  // accuracy for offline, which measured almost nothing itself.
  if (auto online = samples_from_records(out.runs[0].result.records); !online.empty())
    out.runs[1].accuracy = model::evaluate(*pretrained, online).pairwise;
  return out;
}

} // namespace kiln::search
