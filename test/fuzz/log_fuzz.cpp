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
  // Two records, each on one op: replaying is what --resume and replay do
  // with a record, and the schedule target fuzzes it in depth; here it must
  // not slow the reading down.
  const auto& ops = kiln::fuzz::fuzz_ops();
  for (std::size_t i = 0; i < log->records.size() && i < 2; ++i)
    kiln::fuzz::replay_and_lower(ops[static_cast<std::size_t>(log->records[i].trial) % ops.size()],
                                 log->records[i].config.steps);
  return 0;
}
