#include "row_builder.h"

#include "buffer_access.h"
#include "loop_chain.h"
#include "op_counts.h"

#include <algorithm>
#include <cmath>

namespace kiln::model::detail {

using schedule::BufferScope;
using schedule::ForKind;

/// Operations of one execution of the statement: its value and the indices
/// of its store (a load's indices are inside the value).
static ComputeCounts ops_per_execution(const Group& g) {
  ComputeCounts ops;
  count_ops(g.store->value, ops);
  for (const ir::Expr& e : g.store->indices)
    count_ops(e, ops);
  return ops;
}

/// Operations of the statement over the whole run: `per_execution` times
/// every execution, and the conditions of enclosing ifs once per iteration
/// of the loops around them.
static ComputeCounts total_ops(const Group& g, const LoopChain& chain,
                               const ComputeCounts& per_execution) {
  ComputeCounts total;
  add_scaled(total, per_execution, chain.product(0, chain.size()));
  for (const auto& [node, depth] : g.ifs) {
    ComputeCounts guard;
    count_ops(node->cond, guard);
    // The loops of the chain outside the if.
    const std::size_t outside =
        depth == 0 ? 0 : chain.index_of(static_cast<std::size_t>(depth) - 1) + 1;
    add_scaled(total, guard, chain.product(0, outside));
  }
  return total;
}

/// The loops of `kind` in the chain.
static AnnotationFeatures annotation(const LoopChain& chain, ForKind kind) {
  double num = 0, prod = 1, inner = 0;
  int inner_pos = -1;
  for (std::size_t j = 0; j < chain.size(); ++j) {
    if (chain[j].kind != kind)
      continue;
    ++num;
    prod *= static_cast<double>(chain[j].extent);
    inner = static_cast<double>(chain[j].extent);
    inner_pos = static_cast<int>(j);
  }
  AnnotationFeatures f;
  f.num = num;
  f.prod = num > 0 ? prod : 0;
  f.len_inner = inner;
  const int last = static_cast<int>(chain.size()) - 1;
  if (inner_pos < 0)
    f.pos_none = 1;
  else if (inner_pos == last)
    f.pos_inner = 1;
  else if (inner_pos == 0)
    f.pos_outer = 1;
  else
    f.pos_middle = 1;
  return f;
}

static BufferFeatures buffer_features(const BufferStats& b) {
  BufferFeatures f;
  f.is_read = b.read && !b.write;
  f.is_write = b.write && !b.read;
  f.is_read_write = b.read && b.write;
  f.bytes = b.bytes;
  f.unique_bytes = b.unique_elems[0] * b.geom.elem_bytes;
  f.lines = b.lines;
  f.unique_lines = b.unique_lines[0];
  switch (b.reuse) {
  case Reuse::Loop:
    f.reuse_loop = 1;
    break;
  case Reuse::Serial:
    f.reuse_serial = 1;
    break;
  case Reuse::None:
    f.reuse_none = 1;
    break;
  }
  f.reuse_dis_iter = b.reuse_dis_iter;
  f.reuse_dis_bytes = b.reuse_dis_bytes;
  f.reuse_ct = b.reuse_ct;
  const double ct = std::max(1.0, b.reuse_ct);
  f.bytes_d_reuse_ct = f.bytes / ct;
  f.unique_bytes_d_reuse_ct = f.unique_bytes / ct;
  f.lines_d_reuse_ct = f.lines / ct;
  f.unique_lines_d_reuse_ct = f.unique_lines / ct;
  f.stride = b.innermost_stride;
  return f;
}

/// The buffer slots: the top buffers by lines, then bytes, then name (for
/// determinism); the slots left over stay 0.
static void fill_buffer_slots(const std::vector<BufferStats>& bufs,
                              std::array<BufferFeatures, kBufferSlots>& slots) {
  std::vector<const BufferStats*> order;
  for (const BufferStats& b : bufs)
    order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const BufferStats* x, const BufferStats* y) {
    if (x->lines != y->lines)
      return x->lines > y->lines;
    if (x->bytes != y->bytes)
      return x->bytes > y->bytes;
    return x->name < y->name;
  });
  for (std::size_t slot = 0; slot < order.size() && slot < kBufferSlots; ++slot)
    slots[slot] = buffer_features(*order[slot]);
}

/// FLOPs per byte of unique data at every level of the nest from the
/// statement outwards, resampled at evenly spaced points in log2(FLOPs)
/// (Ansor's curve). All 0 without float arithmetic.
static std::array<double, kIntensityPoints>
intensity(const LoopChain& chain, const ComputeCounts& ops, const std::vector<BufferStats>& bufs) {
  std::array<double, kIntensityPoints> out{};
  const double flops = float_flops(ops);
  if (flops <= 0)
    return out;
  std::vector<double> x, y; // log2 FLOPs and intensity, inner to outer
  for (std::size_t l = chain.size() + 1; l-- > 0;) {
    double f = flops * chain.product(l, chain.size());
    double bytes = 0;
    for (const BufferStats& b : bufs)
      bytes += b.unique_elems[l] * b.geom.elem_bytes;
    x.push_back(std::log2(f));
    y.push_back(bytes > 0 ? f / bytes : 0);
  }
  const double top = x.back();
  std::size_t p = 0;
  for (std::size_t i = 0; i < kIntensityPoints; ++i) {
    const double t = top * static_cast<double>(i + 1) / static_cast<double>(kIntensityPoints);
    while (p + 1 < x.size() && x[p] < t - 1e-9)
      ++p;
    if (p == 0 || x[p] <= x[p - 1]) {
      out[i] = y[p];
      continue;
    }
    const double w = std::clamp((t - x[p - 1]) / (x[p] - x[p - 1]), 0.0, 1.0);
    out[i] = y[p - 1] + w * (y[p] - y[p - 1]);
  }
  return out;
}

/// Allocations around the statement, the store's target, the nest.
static ScopeFeatures scope_features(const Group& g, const LoopChain& chain,
                                    const StatementGroups& groups) {
  ScopeFeatures f;
  int innermost_alloc_depth = -1;
  for (const auto& [node, depth] : g.allocs) {
    const double bytes = static_cast<double>(node->buffer.size_bytes());
    (node->buffer.scope == BufferScope::Local ? f.alloc_local_bytes : f.alloc_heap_bytes) += bytes;
    f.alloc_count += 1;
    innermost_alloc_depth = std::max(innermost_alloc_depth, depth);
  }
  if (innermost_alloc_depth >= 0) {
    double p = 1;
    for (int i = 0; i < innermost_alloc_depth; ++i)
      p *= static_cast<double>(g.loops[static_cast<std::size_t>(i)]->extent);
    f.alloc_outer_prod = p;
  }
  const schedule::Buffer* target = groups.find_buffer(g.store->buffer);
  switch (target ? target->scope : BufferScope::Global) {
  case BufferScope::Argument:
  case BufferScope::Packed: // only the prepack function stores there
    f.store_arg = 1;
    break;
  case BufferScope::Global:
    f.store_heap = 1;
    break;
  case BufferScope::Local:
    f.store_local = 1;
    break;
  }
  f.outer_loop_count = static_cast<double>(chain.size());
  f.outer_loop_prod = chain.product(0, chain.size());
  // Copies that unrolling makes of the statement: the unrolled loops of an
  // unexpanded tree, or the copies merged from an expanded one.
  double copies = 1;
  for (const ChainLoop& c : chain.loops)
    if (c.kind == ForKind::Unrolled)
      copies *= static_cast<double>(c.extent);
  f.unroll_stmts = copies;
  return f;
}

/// The register block: statement instances in it, distinct elements it
/// stores (accumulators, when the store is a reduction), distinct elements it
/// loads from other buffers, FLOPs per such load, and the extent of the
/// serial loop just outside it (what its loop overhead is spread over).
static RegisterBlockFeatures register_block(const LoopChain& chain, const ComputeCounts& ops,
                                            const std::vector<BufferStats>& bufs) {
  std::size_t level = chain.size();
  while (level > 0 && (chain[level - 1].kind == ForKind::Unrolled ||
                       chain[level - 1].kind == ForKind::Vectorized))
    --level;
  const double block = chain.product(level, chain.size());
  const double flops = float_flops(ops);
  double stored = 0, loaded = 0;
  for (const BufferStats& b : bufs) {
    if (b.write)
      stored += b.unique_elems[level];
    else
      loaded += b.unique_elems[level];
  }
  RegisterBlockFeatures f;
  f.reg_block = block;
  f.reg_accumulators = stored;
  f.reg_loads = loaded;
  f.reg_flops_per_load = loaded > 0 ? flops * block / loaded : flops * block;
  f.reg_serial_extent = level > 0 ? static_cast<double>(chain[level - 1].extent) : 0;
  return f;
}

FeatureRow build_row(const Group& g, const StatementGroups& groups, const TouchCounts& touch) {
  const LoopChain chain(g);
  FeatureRow row;
  const ComputeCounts per_execution = ops_per_execution(g);
  row.compute = total_ops(g, chain, per_execution);
  row.vec = annotation(chain, ForKind::Vectorized);
  row.unroll = annotation(chain, ForKind::Unrolled);
  row.par = annotation(chain, ForKind::Parallel);
  const std::vector<BufferStats> bufs = buffer_stats(g, chain, groups, touch);
  fill_buffer_slots(bufs, row.buffers);
  row.arith_intensity = intensity(chain, per_execution, bufs);
  row.scope = scope_features(g, chain, groups);
  row.reg = register_block(chain, per_execution, bufs);
  return row;
}

} // namespace kiln::model::detail
