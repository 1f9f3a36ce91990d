// Fuzz target: the tuning log reader (docs/log-format.md). A log of any
// bytes loads (bad lines become warnings, never an abort); every record read
// replays on an op (as --resume and replay do) and lowers, or is refused.
#include "fuzz_input.h"

#include "kiln/record/tuning_log.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kiln::fuzz::MemoryFile file(data, size);
  auto log = kiln::record::load_log(file.path());
  if (!log)
    kiln::fuzz::fail("a readable log did not load: " + log.error().render());
  // A few records are enough: each replays on every op.
  for (std::size_t i = 0; i < log->records.size() && i < 4; ++i)
    for (const kiln::ir::ComputeDAG& dag : kiln::fuzz::fuzz_ops())
      kiln::fuzz::replay_and_lower(dag, log->records[i].config.steps);
  return 0;
}
