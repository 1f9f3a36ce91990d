// One computation in kiln-worker (worker.h) for the reference and for
// `kiln run`: a request in, an answer out, with a timeout; or the same
// computation in this process when isolation is off.
#ifndef KILN_MEASURE_WORKER_CALL_H
#define KILN_MEASURE_WORKER_CALL_H

#include "worker_protocol.h"

#include "kiln/measure/bytes.h"
#include "kiln/measure/isolation.h"
#include "kiln/support/error.h"

#include <functional>
#include <string>
#include <string_view>

namespace kiln::measure {

/// The answer of a worker started for `job` and sent `request`. A UserError
/// the job throws in the worker comes back as that Error; a signal is a
/// "crashed" Error, no answer within the isolation's timeout a "timed-out"
/// Error (the worker is killed). `what` names the computation in those
/// messages, e.g. "the reference computation of 'matmul'".
Expected<std::string> call_worker(const Isolation& isolation, protocol::Job job,
                                  std::string_view request, std::string_view what);

/// `in_worker` (the request's bytes) for call_worker when isolation is on,
/// else `here` in this process, its UserError returned as an Error.
Expected<std::string> call_with(const Isolation& isolation, protocol::Job job,
                                const std::function<std::string()>& in_worker,
                                const std::function<std::string()>& here, std::string_view what);

} // namespace kiln::measure

#endif
