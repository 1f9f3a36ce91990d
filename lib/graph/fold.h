// Graph rewrites import does before partitioning.
#ifndef KILN_GRAPH_FOLD_H
#define KILN_GRAPH_FOLD_H

#include "kiln/graph/graph.h"

namespace kiln::graph {

/// Folds each BatchNormalization whose input is a conv's output read by
/// nothing else into that conv: the weights scaled per output channel, the
/// shift added to its bias.
void fold_batch_norms(Graph& graph);

} // namespace kiln::graph

#endif // KILN_GRAPH_FOLD_H
