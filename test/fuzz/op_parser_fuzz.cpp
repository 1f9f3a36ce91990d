// Fuzz target: the op language parser (docs/op-language.md). Any text must
// parse to a valid DAG or give a located Error; a DAG that parses must print
// and parse back to the same workload.
#include "fuzz_input.h"

#include "kiln/ir/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto dag = kiln::ir::parse_op(text, "fuzz.kop");
  if (!dag) {
    (void)dag.error().render();
    return 0;
  }
  std::string printed = dag->to_string();
  auto again = kiln::ir::parse_op(printed, "printed.kop");
  if (!again)
    kiln::fuzz::fail("the printed op does not parse: " + again.error().render() + "\n" + printed);
  if (again->workload_key() != dag->workload_key())
    kiln::fuzz::fail("the printed op parses to another workload:\n" + printed);
  return 0;
}
