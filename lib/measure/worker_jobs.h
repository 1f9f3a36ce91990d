// The jobs kiln-worker does (worker.cpp dispatches them): each reads its
// request and returns its answer's bytes, or throws UserError.
#ifndef KILN_MEASURE_WORKER_JOBS_H
#define KILN_MEASURE_WORKER_JOBS_H

#include "kiln/measure/bytes.h"

#include <string>

namespace kiln::measure {

/// protocol::Job::Reference: the naive kernel's outputs on seeded inputs,
/// checked against the interpreter (reference.cpp).
std::string reference_job(ByteReader& request);

/// protocol::Job::Run: `kiln run`'s call, check and timing of one kernel
/// (run.cpp).
std::string run_job(ByteReader& request);

} // namespace kiln::measure

#endif
