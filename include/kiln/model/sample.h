// What the cost model learns from: measured programs, labelled by how fast
// they ran relative to the best program of their group (a task; a task on
// one machine when records of several are pooled). Labelling happens here
// and nowhere else.
#ifndef KILN_MODEL_SAMPLE_H
#define KILN_MODEL_SAMPLE_H

#include "kiln/model/features.h"

#include <string>
#include <vector>

namespace kiln::model {

/// One measured program and its label, the normalised throughput within
/// its group: (best time of the group) / (this time), so 1 for the group's
/// best and 0 for a program that failed.
struct Sample {
  ProgramFeatures features;
  double label = 0;
  std::string task; ///< the group, for per-task training and metrics
};

/// One measured program before labelling.
struct Measured {
  ProgramFeatures features; ///< empty when the program could not be rebuilt
  double seconds = 0;       ///< per call; 0 when the measurement failed
  std::string group;
};

/// The samples of measured programs, in order, labelled within their
/// groups. A program without features still counts towards its group's
/// best time, but gives no sample.
std::vector<Sample> label_samples(const std::vector<Measured>& measured);

} // namespace kiln::model

#endif // KILN_MODEL_SAMPLE_H
