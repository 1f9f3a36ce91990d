// The MPI transport, built alone into the plugin libkiln_mpi.so (only when
// CMake finds MPI): kiln loads it when mpirun started it (join.cpp), so
// that neither libkiln nor a kiln run alone links or needs MPI.
#include "kiln/cluster/transport.h"

#include <chrono>
#include <list>
#include <mpi.h>
#include <thread>

namespace {

using kiln::cluster::Message;
using kiln::cluster::Tag;

class MpiTransport final : public kiln::cluster::Transport {
public:
  MpiTransport(int rank, int size, std::string host)
      : rank_(rank), size_(size), host_(std::move(host)) {}

  ~MpiTransport() override {
    // Sends still in flight to a rank that stopped reading (it failed) are
    // given a few seconds, then left: MPI_Finalize would wait for them.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!pending_.empty() && std::chrono::steady_clock::now() < until)
      complete_sends();
    MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& host() const override { return host_; }

  void send(int to, Tag tag, const std::string& bytes) override {
    complete_sends();
    // A non-blocking send, its buffer kept until MPI is done with it: a
    // rank that has stopped answering never blocks the sender.
    pending_.push_back({bytes, MPI_REQUEST_NULL});
    Pending& p = pending_.back();
    MPI_Isend(p.bytes.data(), static_cast<int>(p.bytes.size()), MPI_BYTE, to, static_cast<int>(tag),
              MPI_COMM_WORLD, &p.request);
  }

  std::optional<Message> receive(int from, double timeout_seconds) override {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      complete_sends();
      int ready = 0;
      MPI_Status status;
      if (MPI_Iprobe(from, MPI_ANY_TAG, MPI_COMM_WORLD, &ready, &status) != MPI_SUCCESS)
        return std::nullopt;
      if (ready) {
        int count = 0;
        MPI_Get_count(&status, MPI_BYTE, &count);
        Message m{status.MPI_SOURCE, static_cast<Tag>(status.MPI_TAG),
                  std::string(static_cast<std::size_t>(count), '\0')};
        MPI_Recv(m.bytes.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        return m;
      }
      const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - start;
      if (timeout_seconds >= 0 && waited.count() > timeout_seconds)
        return std::nullopt;
      // Polled, not blocked in MPI_Recv: a receive must be able to give up.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  std::vector<std::string> all_gather(const std::string& mine) override {
    int length = static_cast<int>(mine.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    std::vector<int> offsets(lengths.size());
    int total = 0;
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(),
                   MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < lengths.size(); ++r)
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
    return out;
  }

private:
  struct Pending {
    std::string bytes;
    MPI_Request request;
  };

  void complete_sends() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      int done = 0;
      MPI_Test(&it->request, &done, MPI_STATUS_IGNORE);
      it = done ? pending_.erase(it) : std::next(it);
    }
  }

  int rank_, size_;
  std::string host_;
  std::list<Pending> pending_; ///< a list: buffers must not move while in flight
};

} // namespace

extern "C" kiln::cluster::Transport* kiln_mpi_join(int version, std::string* error) {
  if (version != kiln::cluster::kTransportVersion) {
    *error = "the MPI plugin is of another kiln build; point KILN_MPI_PLUGIN at this build's";
    return nullptr;
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
      *error = "MPI_Init_thread failed";
      return nullptr;
    }
  }
  // Errors come back as codes (a receive gives up), not as the end of the
  // job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1, length = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  MPI_Get_processor_name(name, &length);
  return new MpiTransport(rank, size, std::string(name, static_cast<std::size_t>(length)));
}
