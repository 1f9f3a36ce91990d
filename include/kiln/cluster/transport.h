// One process of a tuning job spread over several machines: its rank, its
// host, and messages to and from the other ranks. MPI carries them
// (mpi_transport.cpp, built into a plugin, libkiln_mpi.so, that kiln loads
// only when mpirun started it), so that kiln neither links nor needs MPI
// when it runs alone (docs/design.md, "A tuning job on a cluster").
#ifndef KILN_CLUSTER_TRANSPORT_H
#define KILN_CLUSTER_TRANSPORT_H

#include "kiln/support/error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cluster {

/// What a message is; the same numbers on every rank.
enum class Tag : int {
  Batch = 1,  ///< rank 0 → a rank: programs to measure (wire.h)
  Result = 2, ///< a rank → rank 0: their results
  Stop = 3,   ///< rank 0 → a rank: the job is over
};

struct Message {
  int from = 0;
  Tag tag = Tag::Stop;
  std::string bytes;
};

class Transport {
public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// This rank's host name.
  virtual const std::string& host() const = 0;
  /// Sends `bytes` to rank `to` (returns once they are on their way).
  virtual void send(int to, Tag tag, const std::string& bytes) = 0;
  /// The next message from rank `from` (any tag), or nullopt when none
  /// came within `timeout_seconds` (< 0: wait for ever).
  virtual std::optional<Message> receive(int from, double timeout_seconds) = 0;
  /// Every rank's `mine`, in rank order, on every rank (collective: all
  /// ranks call it, once each time).
  virtual std::vector<std::string> all_gather(const std::string& mine) = 0;
};

/// The interface version a plugin's kiln_mpi_join must match.
inline constexpr int kTransportVersion = 1;

/// Whether this process was started by mpirun (or another MPI launcher:
/// its rank is in the environment).
bool started_by_mpi_launcher();

/// Joins the MPI job this process is part of, through the MPI plugin: an
/// Error naming what is missing when the plugin cannot be loaded (a kiln
/// built without MPI: install libopenmpi-dev and build again) or MPI
/// cannot start. Call only when started_by_mpi_launcher().
Expected<std::unique_ptr<Transport>> join_mpi_job();

} // namespace kiln::cluster

#endif // KILN_CLUSTER_TRANSPORT_H
