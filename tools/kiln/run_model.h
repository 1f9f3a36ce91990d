// kiln run with an ONNX model instead of an op file.
#ifndef KILN_TOOLS_KILN_RUN_MODEL_H
#define KILN_TOOLS_KILN_RUN_MODEL_H

#include "kiln/network/network_run.h"

#include <string>
#include <vector>

namespace kiln::tool {

struct RunModelFlags {
  std::string model;
  std::vector<std::string> logs;
  bool nearest_shape = true; ///< tasks with no record: the nearest tuned shape, checked
  network::NetworkRunOptions options;
  int threads = 0;
};

int run_model(const RunModelFlags& f);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_RUN_MODEL_H
