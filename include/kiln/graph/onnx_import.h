// Reads an ONNX model into a Graph. Every tensor is f32 with a static shape;
// initializers become constants; a BatchNormalization after a conv is folded
// into the conv's weights and bias. An op, attribute or construct kiln does
// not support is an Error naming the node, its op type and what is supported.
#ifndef KILN_GRAPH_ONNX_IMPORT_H
#define KILN_GRAPH_ONNX_IMPORT_H

#include "kiln/graph/graph.h"
#include "kiln/support/error.h"

#include <string>
#include <string_view>

namespace kiln::graph {

/// The op types import accepts, as a sentence for messages and `--help`.
std::string_view supported_onnx_ops();

/// Reads the model file at `path`.
Expected<Graph> import_onnx_file(const std::string& path);
/// Reads a serialised ModelProto; `source` names it in messages.
Expected<Graph> import_onnx(std::string_view bytes, const std::string& source);

} // namespace kiln::graph

#endif // KILN_GRAPH_ONNX_IMPORT_H
