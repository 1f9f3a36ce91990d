// The messages of a tuning job between rank 0 and the ranks that measure
// for it, as JSON text (transport.h carries the bytes).
#ifndef KILN_LIB_CLUSTER_WIRE_H
#define KILN_LIB_CLUSTER_WIRE_H

#include "kiln/record/record.h"
#include "kiln/schedule/transform_step.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cluster {

/// Rank 0 → a rank: the programs of one task to measure.
struct BatchMessage {
  std::int64_t batch = 0;
  record::TaskInfo task;
  std::vector<std::vector<schedule::Step>> programs;
};

/// A rank → rank 0: one result per program, in order, or why there are none.
struct ResultMessage {
  std::int64_t batch = 0;
  std::string error; ///< empty: `results` holds one per program
  std::vector<record::MeasureResult> results;
};

std::string encode(const BatchMessage& m);
std::string encode(const ResultMessage& m);
/// An Error when the text is not such a message (a rank of another kiln).
Expected<BatchMessage> decode_batch(std::string_view text);
Expected<ResultMessage> decode_result(std::string_view text);

} // namespace kiln::cluster

#endif // KILN_LIB_CLUSTER_WIRE_H
