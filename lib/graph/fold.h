// Graph rewrites done before partitioning.
#ifndef KILN_GRAPH_FOLD_H
#define KILN_GRAPH_FOLD_H

#include "kiln/graph/graph.h"

namespace kiln::graph {

/// Folds each BatchNormalization whose input is a conv's output read by
/// nothing else into that conv: the weights scaled per output channel, the
/// shift added to its bias.
void fold_batch_norms(Graph& graph);

/// Computes each 1×1 conv of stride 1 without padding on its map's
/// positions as one axis: [N, C, H, W] read as [N, C, 1, H·W], and so the
/// elementwise nodes after it that only it feeds (bias, clip, a residual
/// add), a reshape restoring the shape after them. A 7×7 map is then 49
/// positions to vectorize and tile, not rows of 7.
void flatten_pointwise_convs(Graph& graph);

} // namespace kiln::graph

#endif // KILN_GRAPH_FOLD_H
