// Ranks of one process, for the cluster tests: every rank's Transport is an
// endpoint of one in-memory hub, each rank run by its own thread.
#ifndef KILN_TEST_UNIT_CLUSTER_LOOPBACK_TRANSPORT_H
#define KILN_TEST_UNIT_CLUSTER_LOOPBACK_TRANSPORT_H

#include "kiln/cluster/transport.h"

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::test {

class LoopbackHub {
public:
  explicit LoopbackHub(int size)
      : size_(size), inbox_(static_cast<std::size_t>(size)),
        gathered_(static_cast<std::size_t>(size)), barrier_(size) {}

  class Endpoint final : public cluster::Transport {
  public:
    Endpoint(LoopbackHub& hub, int rank, std::string host)
        : hub_(hub), rank_(rank), host_(std::move(host)) {}
    int rank() const override { return rank_; }
    int size() const override { return hub_.size_; }
    const std::string& host() const override { return host_; }
    void send(int to, cluster::Tag tag, const std::string& bytes) override {
      std::lock_guard<std::mutex> lock(hub_.mutex_);
      hub_.inbox_[static_cast<std::size_t>(to)].push_back({rank_, tag, bytes});
      hub_.arrived_.notify_all();
    }
    std::optional<cluster::Message> receive(int from, double timeout_seconds) override {
      std::unique_lock<std::mutex> lock(hub_.mutex_);
      auto& box = hub_.inbox_[static_cast<std::size_t>(rank_)];
      auto ready = [&] {
        for (auto it = box.begin(); it != box.end(); ++it)
          if (it->from == from)
            return true;
        return false;
      };
      if (timeout_seconds < 0)
        hub_.arrived_.wait(lock, ready);
      else if (!hub_.arrived_.wait_for(lock, std::chrono::duration<double>(timeout_seconds), ready))
        return std::nullopt;
      for (auto it = box.begin(); it != box.end(); ++it)
        if (it->from == from) {
          cluster::Message m = std::move(*it);
          box.erase(it);
          return m;
        }
      return std::nullopt;
    }
    std::vector<std::string> all_gather(const std::string& mine) override {
      hub_.gathered_[static_cast<std::size_t>(rank_)] = mine;
      hub_.barrier_.arrive_and_wait();
      std::vector<std::string> all = hub_.gathered_;
      hub_.barrier_.arrive_and_wait();
      return all;
    }

  private:
    LoopbackHub& hub_;
    int rank_;
    std::string host_;
  };

  std::unique_ptr<Endpoint> endpoint(int rank, std::string host) {
    return std::make_unique<Endpoint>(*this, rank, std::move(host));
  }

private:
  int size_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::deque<cluster::Message>> inbox_;
  std::vector<std::string> gathered_;
  std::barrier<> barrier_;
};

} // namespace kiln::test

#endif // KILN_TEST_UNIT_CLUSTER_LOOPBACK_TRANSPORT_H
