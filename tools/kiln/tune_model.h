// kiln tune with an ONNX model: all its tasks in one run.
#ifndef KILN_TOOLS_KILN_TUNE_MODEL_H
#define KILN_TOOLS_KILN_TUNE_MODEL_H

#include "tune_flags.h"

namespace kiln::tool {

int tune_model(CLI::App* cmd, TuneFlags& f, const std::string& scheduler, const ToolContext& ctx);

} // namespace kiln::tool

#endif // KILN_TOOLS_KILN_TUNE_MODEL_H
