// What `kiln tune` prints: a progress line per round (a bar on a terminal)
// and the summary at the end.
#ifndef KILN_SEARCH_PROGRESS_H
#define KILN_SEARCH_PROGRESS_H

#include "kiln/search/tuner.h"

#include <string>

namespace kiln::search {

/// One line: trials done / budget, best GFLOPS, trials per second, errors,
/// model accuracy, ETA. With `bar`, a bar that redraws in place.
std::string progress_line(const RoundStats& round, int budget, std::int64_t errors, bool bar);

/// The end of a run: best GFLOPS, speedup over naive, time, where the best
/// schedule went and how to use it.
std::string summary(const TuneResult& result, const std::string& op_file,
                    const std::string& schedule_file, const std::string& log_file);

} // namespace kiln::search

#endif
