#include "kiln/cluster/job.h"

#include "wire.h"

#include "kiln/support/stopwatch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <map>
#include <unistd.h>

namespace kiln::cluster {

Job::Job(Transport& transport, double build_seconds)
    : transport_(transport), build_seconds_(build_seconds) {
  for (int r = 0; r < transport.size(); ++r)
    live_.push_back(r);
}

void Job::drop(int rank, const std::string& why) {
  KILN_ASSERT(rank != 0, "rank 0 runs the search; it is never dropped");
  live_.erase(std::remove(live_.begin(), live_.end(), rank), live_.end());
  events_.push_back(why);
}

double Job::answer_timeout(const measure::MeasureOptions& options, std::size_t programs) const {
  return options.reference_timeout_seconds +
         static_cast<double>(programs) * (options.runner.timeout_seconds + build_seconds_);
}

namespace {

class DistributedMeasurer final : public measure::Measurer {
public:
  DistributedMeasurer(Job& job, std::unique_ptr<measure::Measurer> local, const ir::ComputeDAG& dag,
                      const measure::MeasureOptions& options)
      : job_(job), local_(std::move(local)), task_(record::TaskInfo::from_dag(dag, "")),
        options_(options) {}

  using Measurer::measure;
  std::vector<record::MeasureResult>
  measure(std::span<const schedule::State* const> states) override {
    submit(states);
    return collect();
  }

  /// Sends the other ranks their slices and starts measuring rank 0's on
  /// a thread of its own, so that the caller can search meanwhile.
  void submit(std::span<const schedule::State* const> states) override {
    KILN_ASSERT(!flight_, "one batch in flight at a time");
    Flight f;
    f.clock = Stopwatch();
    f.batch = job_.next_batch();
    f.states.assign(states.begin(), states.end());
    f.ranks = job_.live_ranks();
    const std::size_t n = f.states.size();
    const std::size_t k = std::max<std::size_t>(1, std::min(f.ranks.size(), n));
    for (std::size_t j = 0; j <= k; ++j)
      f.begin.push_back(j * n / k);
    for (std::size_t j = 1; j < k; ++j) {
      BatchMessage m{f.batch, task_, {}};
      for (std::size_t i = f.begin[j]; i < f.begin[j + 1]; ++i)
        m.programs.push_back(f.states[i]->steps());
      job_.transport().send(f.ranks[j], Tag::Batch, encode(m));
    }
    const std::span<const schedule::State* const> own(f.states.data(), f.begin[1]);
    f.local = std::async(std::launch::async, [this, own] { return local_slice(own); });
    flight_ = std::move(f);
  }

  std::vector<record::MeasureResult> collect() override {
    KILN_ASSERT(flight_.has_value(), "collect() after submit()");
    Flight f = std::move(*flight_);
    flight_.reset();
    std::vector<record::MeasureResult> out(f.states.size());
    place(out, 0, f.local.get());
    for (std::size_t j = 1; j + 1 < f.begin.size(); ++j) {
      const std::size_t first = f.begin[j], count = f.begin[j + 1] - first;
      std::string why;
      std::optional<std::vector<record::MeasureResult>> got =
          remote_slice(f.ranks[j], f.batch, count, &why);
      if (!got) {
        job_.drop(f.ranks[j],
                  fmt::format("rank {} stopped answering ({}); its {} program{} of batch {} were "
                              "measured on rank 0, and it gets no more",
                              f.ranks[j], why, count, count == 1 ? "" : "s", f.batch));
        got = local_slice(std::span<const schedule::State* const>(f.states).subspan(first, count));
      }
      place(out, first, std::move(*got));
    }
    for (const record::MeasureResult& r : out) {
      ++stats_.trials;
      ++stats_.by_error[static_cast<std::size_t>(r.error)];
      stats_.build_seconds += r.build_seconds;
      stats_.run_seconds += r.run_seconds;
    }
    stats_.wall_seconds += f.clock.elapsed_ms() / 1e3;
    return out;
  }

  const measure::MeasureStats& stats() const override { return stats_; }

private:
  std::vector<record::MeasureResult> local_slice(std::span<const schedule::State* const> states) {
    std::vector<record::MeasureResult> results = local_->measure(states);
    for (record::MeasureResult& r : results) {
      r.host = job_.transport().host();
      r.rank = 0;
    }
    return results;
  }

  std::optional<std::vector<record::MeasureResult>>
  remote_slice(int rank, std::int64_t batch, std::size_t count, std::string* why) {
    const double timeout = job_.answer_timeout(options_, count);
    std::optional<Message> m = job_.transport().receive(rank, timeout);
    if (!m) {
      *why = fmt::format("no answer in {:.0f} s", timeout);
      return std::nullopt;
    }
    auto result = decode_result(m->bytes);
    if (!result) {
      *why = result.error().message();
      return std::nullopt;
    }
    if (!result->error.empty()) {
      *why = result->error;
      return std::nullopt;
    }
    if (m->tag != Tag::Result || result->batch != batch || result->results.size() != count) {
      *why = fmt::format("an answer to batch {} with {} results, not to batch {} with {}",
                         result->batch, result->results.size(), batch, count);
      return std::nullopt;
    }
    return std::move(result->results);
  }

  static void place(std::vector<record::MeasureResult>& out, std::size_t first,
                    std::vector<record::MeasureResult> results) {
    std::move(results.begin(), results.end(), out.begin() + static_cast<std::ptrdiff_t>(first));
  }

  /// The batch submitted and not yet collected.
  struct Flight {
    Stopwatch clock;
    std::int64_t batch = 0;
    std::vector<const schedule::State*> states;
    std::vector<int> ranks;         ///< the slices' ranks, rank 0 first
    std::vector<std::size_t> begin; ///< slice j is [begin[j], begin[j + 1])
    std::future<std::vector<record::MeasureResult>> local;
  };

  Job& job_;
  std::unique_ptr<measure::Measurer> local_;
  std::optional<Flight> flight_;
  record::TaskInfo task_;
  measure::MeasureOptions options_;
  measure::MeasureStats stats_;
};

std::string machine_of(const Target& t) {
  return fmt::format("{}|{}|{}", t.triple, t.cpu, t.features);
}

/// `KILN_CLUSTER_FAIL_AFTER=RANK:N`: rank RANK dies, without a word, on
/// receiving its batch after the N-th it answered — a machine failing with
/// a batch in flight, for the fault tests (docs/robustness.md).
bool injected_failure(int rank, int answered) {
  const char* v = std::getenv("KILN_CLUSTER_FAIL_AFTER");
  int fail_rank = -1, fail_after = -1;
  return v && std::sscanf(v, "%d:%d", &fail_rank, &fail_after) == 2 && fail_rank == rank &&
         answered >= fail_after;
}

} // namespace

std::unique_ptr<measure::Measurer> distributed_measurer(Job& job,
                                                        std::unique_ptr<measure::Measurer> local,
                                                        const ir::ComputeDAG& dag,
                                                        const measure::MeasureOptions& options) {
  return std::make_unique<DistributedMeasurer>(job, std::move(local), dag, options);
}

std::optional<Error> check_same_machines(Transport& transport, const Target& target) {
  const std::vector<std::string> all = transport.all_gather(machine_of(target));
  const std::vector<std::string> hosts = transport.all_gather(transport.host());
  for (std::size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      return Error("mixed-machines",
                   fmt::format("rank {} ({}) is not the same kind of machine as rank 0 ({}): "
                               "{} against {}; the records of one job share a label group, so "
                               "run one job per kind of machine (a hostfile of one CPU each)",
                               r, hosts[r], hosts[0], all[r], all[0]));
  return std::nullopt;
}

std::optional<Error> serve_measurements(Transport& transport, const Target& target,
                                        const measure::MeasureOptions& options,
                                        const measure::MeasurerFactory& make) {
  std::map<std::string, std::unique_ptr<measure::Measurer>> measurers;
  int answered = 0;
  for (;;) {
    std::optional<Message> m = transport.receive(0, -1);
    if (!m || m->tag == Tag::Stop)
      return std::nullopt;
    if (injected_failure(transport.rank(), answered))
      _exit(3);
    auto batch = decode_batch(m->bytes);
    if (!batch)
      return batch.error();
    ResultMessage reply{batch->batch, "", {}};
    auto dag = record::task_dag(batch->task);
    std::unique_ptr<measure::Measurer>& measurer = measurers[batch->task.workload_key];
    if (!dag) {
      reply.error = dag.error().message();
    } else if (!measurer) {
      auto made = make(*dag, target, options);
      if (made)
        measurer = std::move(*made);
      else
        reply.error = made.error().message();
    }
    if (reply.error.empty()) {
      std::vector<schedule::State> states;
      std::vector<std::size_t> built;
      reply.results.resize(batch->programs.size());
      for (std::size_t i = 0; i < batch->programs.size(); ++i) {
        auto state = schedule::State::replay(*dag, batch->programs[i]);
        if (state) {
          states.push_back(std::move(*state));
          built.push_back(i);
        } else {
          reply.results[i].error = record::MeasureError::InvalidSchedule;
          reply.results[i].message = state.error().message();
        }
      }
      std::vector<record::MeasureResult> results = measurer->measure(states);
      for (std::size_t i = 0; i < built.size(); ++i)
        reply.results[built[i]] = std::move(results[i]);
      for (record::MeasureResult& r : reply.results) {
        r.host = transport.host();
        r.rank = transport.rank();
      }
    }
    transport.send(0, Tag::Result, encode(reply));
    ++answered;
  }
}

void stop_job(Job& job) {
  for (int r : job.live_ranks())
    if (r != 0)
      job.transport().send(r, Tag::Stop, "");
}

Expected<int> run_job(Transport& transport, const Target& target,
                      const measure::MeasureOptions& options, const measure::MeasurerFactory& base,
                      const std::function<int(const measure::MeasurerFactory&, Job&)>& tune) {
  if (auto err = check_same_machines(transport, target))
    return *err;
  if (transport.rank() != 0) {
    if (auto err = serve_measurements(transport, target, options, base))
      return *err;
    return 0;
  }
  Job job(transport);
  measure::MeasurerFactory distributed =
      [&job,
       &base](const ir::ComputeDAG& dag, const Target& t,
              const measure::MeasureOptions& o) -> Expected<std::unique_ptr<measure::Measurer>> {
    auto local = base(dag, t, o);
    if (!local)
      return local.error();
    return distributed_measurer(job, std::move(*local), dag, o);
  };
  const int code = tune(distributed, job);
  stop_job(job);
  return code;
}

} // namespace kiln::cluster
