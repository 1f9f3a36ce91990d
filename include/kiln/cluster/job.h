// A tuning job over the ranks of an MPI job (`mpirun -np N kiln tune …`):
// rank 0 runs the search as a run of one process would (task scheduler,
// tuner, cost model, the one log), and every batch it measures is split
// among the ranks that still answer, rank 0 included; the other ranks only
// measure, until rank 0 is done (docs/design.md, "A tuning job on a
// cluster").
#ifndef KILN_CLUSTER_JOB_H
#define KILN_CLUSTER_JOB_H

#include "kiln/cluster/transport.h"
#include "kiln/measure/measurer.h"
#include "kiln/support/target.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cluster {

/// Rank 0's view of the job: which ranks still answer, and what happened
/// to those that stopped.
class Job {
public:
  /// `build_seconds`: how long a rank may take to build one program (the
  /// builder has no timeout of its own).
  explicit Job(Transport& transport, double build_seconds = 60);
  Transport& transport() { return transport_; }
  /// Rank 0 first, then every rank that has not been dropped.
  const std::vector<int>& live_ranks() const { return live_; }
  /// Stops sending to `rank` (it failed or stopped answering); its batch
  /// in flight is measured by rank 0.
  void drop(int rank, const std::string& why);
  /// "rank 2 (node3) stopped answering: …; its 8 programs were measured on
  /// rank 0" for each dropped rank.
  const std::vector<std::string>& events() const { return events_; }
  std::int64_t next_batch() { return ++batch_; }
  /// Seconds a rank may take for `programs` programs before it counts as
  /// failed: its reference and, per program, the build, the check and the
  /// timing, each at most its timeout.
  double answer_timeout(const measure::MeasureOptions& options, std::size_t programs) const;

private:
  Transport& transport_;
  std::vector<int> live_;
  std::vector<std::string> events_;
  std::int64_t batch_ = 0;
  double build_seconds_;
};

/// A measurer of rank 0 that splits each batch into contiguous slices, one
/// per live rank, measures its own slice with `local` and the others on
/// their ranks; a rank that fails or does not answer in time is dropped and
/// its slice measured by `local`. Every result says which host and rank
/// measured it.
std::unique_ptr<measure::Measurer> distributed_measurer(Job& job,
                                                        std::unique_ptr<measure::Measurer> local,
                                                        const ir::ComputeDAG& dag,
                                                        const measure::MeasureOptions& options);

/// Collective (every rank calls it): an Error, the same on every rank, when
/// a rank is not the same kind of machine as rank 0 (triple, CPU and
/// features): records of one job share one label group, so a job runs on
/// machines of one kind.
std::optional<Error> check_same_machines(Transport& transport, const Target& target);

/// What a rank other than 0 does: measures the batches rank 0 sends, with a
/// measurer per task from `make` (the same options as rank 0's, as mpirun
/// runs one command line), until rank 0 says stop.
std::optional<Error> serve_measurements(Transport& transport, const Target& target,
                                        const measure::MeasureOptions& options,
                                        const measure::MeasurerFactory& make);

/// Tells every live rank the job is over (rank 0, once, at the end).
void stop_job(Job& job);

/// The whole job, called on every rank: checks the machines
/// (check_same_machines); then rank 0 calls `tune` with a factory of
/// distributed measurers over `base` and the job, and stops the other ranks
/// when it returns, while they serve measurements. Returns `tune`'s value
/// on rank 0 and 0 on the others, or an Error (the same on every rank for
/// mixed machines).
Expected<int> run_job(Transport& transport, const Target& target,
                      const measure::MeasureOptions& options, const measure::MeasurerFactory& base,
                      const std::function<int(const measure::MeasurerFactory&, Job&)>& tune);

} // namespace kiln::cluster

#endif // KILN_CLUSTER_JOB_H
