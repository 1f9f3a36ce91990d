// Fuzz target: the schedule file reader (docs/schedule-format.md), then the
// steps applied to each fuzz op and lowered.
#include "fuzz_input.h"

#include "kiln/schedule/transform_step.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto steps = kiln::schedule::parse_schedule_file(text, "fuzz.json");
  if (!steps) {
    (void)steps.error().render();
    return 0;
  }
  for (const kiln::ir::ComputeDAG& dag : kiln::fuzz::fuzz_ops())
    kiln::fuzz::replay_and_lower(dag, *steps);
  return 0;
}
