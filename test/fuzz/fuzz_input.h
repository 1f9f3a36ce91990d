// Helpers shared by the fuzz targets (test/fuzz/README.md).
#ifndef KILN_TEST_FUZZ_FUZZ_INPUT_H
#define KILN_TEST_FUZZ_FUZZ_INPUT_H

#include "kiln/ir/compute_dag.h"
#include "kiln/ir/parser.h"
#include "kiln/schedule/lower.h"
#include "kiln/schedule/state.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace kiln::fuzz {

/// A failure of kiln found by fuzzing: print and abort, so that libFuzzer
/// saves the input.
[[noreturn]] inline void fail(const std::string& why) {
  std::fprintf(stderr, "fuzz target: %s\n", why.c_str());
  std::abort();
}

/// The bytes as a file that path-based readers can open: a memfd, named by
/// its /proc/self/fd path (no disk, no temporary file left behind).
class MemoryFile {
public:
  MemoryFile(const std::uint8_t* data, std::size_t size) : fd_(::memfd_create("kiln-fuzz", 0)) {
    if (fd_ < 0)
      fail("memfd_create failed");
    std::size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0)
        fail("cannot write the memfd");
      done += static_cast<std::size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  const std::string& path() const { return path_; }

private:
  int fd_;
  std::string path_;
};

/// The ops of ops/ at small sizes, which schedules and log records are
/// applied to (their stage and loop names are the ones real schedules use).
inline const std::vector<ir::ComputeDAG>& fuzz_ops() {
  static const std::vector<ir::ComputeDAG> ops = [] {
    const std::pair<const char*, ir::ParamOverrides> files[] = {
        {"matmul", {{"M", "48"}, {"N", "40"}, {"K", "36"}}},
        {"conv2d_nchw", {{"C", "8"}, {"H", "10"}, {"W", "10"}, {"K", "16"}}},
        {"conv2d_nchwc", {{"CB", "1"}, {"H", "8"}, {"W", "8"}, {"KB", "2"}, {"VB", "8"}}},
        {"softmax", {{"M", "6"}, {"N", "50"}}},
    };
    std::vector<ir::ComputeDAG> dags;
    for (const auto& [name, overrides] : files) {
      auto dag =
          ir::parse_op_file(std::string(KILN_SOURCE_DIR) + "/ops/" + name + ".kop", overrides);
      if (!dag)
        fail("a fuzz op does not parse: " + dag.error().render());
      dags.push_back(std::move(*dag));
    }
    return dags;
  }();
  return ops;
}

/// Replays `steps` on `dag` and lowers what applies: every step must be
/// refused with an Error or lower to a loop nest, never crash.
inline void replay_and_lower(const ir::ComputeDAG& dag, const std::vector<schedule::Step>& steps) {
  auto state = schedule::State::replay(dag, steps);
  if (!state)
    return;
  try {
    (void)schedule::lower(*state);
  } catch (const UserError&) {
    // A schedule that applies step by step but cannot lower is refused too.
  }
}

} // namespace kiln::fuzz

#endif
