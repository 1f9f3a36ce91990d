// Measuring a logged record again: `kiln replay`.
#ifndef KILN_MEASURE_REPLAY_H
#define KILN_MEASURE_REPLAY_H

#include "kiln/measure/measurer.h"
#include "kiln/record/record.h"

namespace kiln::measure {

/// Rebuilds the record's program on `target` from its logged op and steps,
/// checks its answer against the naive reference and times it again. An
/// Error when the record cannot be rebuilt (an incompatible kiln wrote it);
/// a schedule that no longer applies is an invalid-schedule result.
Expected<record::MeasureResult> replay(const record::Record& record, const Target& target,
                                       const MeasureOptions& options);

} // namespace kiln::measure

#endif
