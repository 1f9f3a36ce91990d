#include "buffer_access.h"

#include "index_analysis.h"

#include "kiln/ir/arith.h"
#include "kiln/ir/expr_visitor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace kiln::model::detail {

using schedule::For;

/// Unique elements and 64-byte lines of a box: the innermost dimensions
/// that cover the whole buffer extent join the next one in a contiguous run.
static std::pair<double, double> footprint(const BufferStats& b, const std::vector<double>& span) {
  if (span.empty())
    return {1, 1};
  double elems = 1;
  for (double s : span)
    elems *= s;
  std::size_t k = span.size() - 1;
  double run = span[k];
  while (k > 0 && span[k] >= static_cast<double>(b.geom.shape[k])) {
    --k;
    run *= span[k];
  }
  double lines_per_run = std::ceil(run * b.geom.elem_bytes / kCacheLineBytes);
  return {elems, (elems / run) * lines_per_run};
}

namespace {

/// The analysis of one group's buffers along its chain.
class BufferAnalysis {
public:
  BufferAnalysis(const Group& g, const LoopChain& chain, const StatementGroups& groups,
                 const TouchCounts& touch)
      : g(g), chain(chain), groups(groups), touch(touch) {}

  /// The buffers in the order of their first access, with their constant
  /// spreads.
  std::vector<BufferStats> collect() {
    std::vector<BufferStats> out;
    for (std::size_t a = 0; a < g.accesses.size(); ++a) {
      const Access& acc = g.accesses[a];
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const BufferStats& b) { return b.name == acc.buffer; });
      if (it == out.end()) {
        BufferStats b;
        b.name = acc.buffer;
        b.indices = acc.indices;
        const std::size_t dims = acc.indices->size();
        b.geom = geometry(groups.find_buffer(acc.buffer), dims);
        for (const ir::Expr& e : *acc.indices)
          b.forms.push_back(ir::linearize(e));
        b.first_flat = g.offsets[a].flat;
        b.spread_rep.assign(dims, 0);
        b.spread_all.assign(dims, 0);
        out.push_back(std::move(b));
        it = out.end() - 1;
      }
      BufferStats& b = *it;
      (acc.write ? b.write : b.read) = true;
      ++b.accesses;
    }
    for (BufferStats& b : out)
      spreads(b);
    return out;
  }

  /// Constant spreads of a buffer's accesses within the representative and
  /// over all copies, and the distinct flat offsets of each.
  void spreads(BufferStats& b) {
    const std::size_t dims = b.indices->size();
    std::vector<std::int64_t> rep_min(dims, std::numeric_limits<std::int64_t>::max());
    std::vector<std::int64_t> rep_max(dims, std::numeric_limits<std::int64_t>::min());
    std::vector<std::int64_t> all_min = rep_min, all_max = rep_max;
    std::vector<std::int64_t> rep_flat, all_flat;
    for (std::size_t a = 0; a < g.accesses.size(); ++a) {
      const AccessOffsets& o = g.offsets[a];
      if (g.accesses[a].buffer != b.name || o.rep.size() != dims)
        continue;
      for (std::size_t d = 0; d < dims; ++d) {
        rep_min[d] = std::min(rep_min[d], o.rep[d]);
        rep_max[d] = std::max(rep_max[d], o.rep[d]);
        all_min[d] = std::min(all_min[d], o.min[d]);
        all_max[d] = std::max(all_max[d], o.max[d]);
      }
      if (!o.flat.empty())
        rep_flat.push_back(o.flat.front());
      all_flat.insert(all_flat.end(), o.flat.begin(), o.flat.end());
    }
    for (std::size_t d = 0; d < dims; ++d) {
      if (rep_min[d] <= rep_max[d])
        b.spread_rep[d] = rep_max[d] - rep_min[d];
      if (all_min[d] <= all_max[d])
        b.spread_all[d] = all_max[d] - all_min[d];
    }
    auto distinct = [](std::vector<std::int64_t>& v) {
      std::sort(v.begin(), v.end());
      return static_cast<double>(std::unique(v.begin(), v.end()) - v.begin());
    };
    b.distinct_rep = std::max(1.0, distinct(rep_flat));
    b.distinct_all = std::max(b.distinct_rep, distinct(all_flat));
    // Offsets are relative to an unknown base; lines assume it is aligned.
    std::vector<std::int64_t> lines;
    for (std::int64_t f : b.first_flat)
      lines.push_back(ir::floor_div(f * b.geom.elem_bytes, kCacheLineBytes));
    b.virtual_lines = std::max(1.0, distinct(lines));
  }

  /// The virtual loop's number of distinct footprints (1: every copy touches
  /// the same elements, copies: all differ).
  double virtual_distinct(const BufferStats& b) const {
    return std::clamp(b.distinct_all / b.distinct_rep, 1.0, static_cast<double>(g.copies));
  }

  /// Per chain loop, the elements an iteration moves the first access by (0:
  /// invariant). A non-affine dimension takes the difference of its values
  /// at var = 1 and var = 0; the virtual loop, the copies' spread over their
  /// distinct footprints.
  void strides(BufferStats& b) {
    const std::size_t dims = b.indices->size();
    b.stride.assign(chain.size(), 0);
    b.coef.assign(dims, std::vector<double>(chain.size(), 0.0));
    for (std::size_t j = 0; j < chain.size(); ++j) {
      if (chain[j].virtual_loop) {
        double distinct = virtual_distinct(b);
        if (distinct > 1) {
          auto [lo, hi] = std::minmax_element(b.first_flat.begin(), b.first_flat.end());
          b.stride[j] = std::max(1.0, static_cast<double>(*hi - *lo) / (distinct - 1));
        }
        continue;
      }
      double s = 0;
      bool depends = false;
      for (std::size_t d = 0; d < dims; ++d) {
        std::int64_t c = 0;
        if (b.forms[d]) {
          c = b.forms[d]->coeff(*chain[j].var);
          depends = depends || c != 0;
          b.coef[d][j] = std::abs(static_cast<double>(c));
        } else {
          c = eval_index((*b.indices)[d], *chain[j].var) - eval_index((*b.indices)[d], {});
          depends = depends || ir::uses_var((*b.indices)[d], *chain[j].var);
        }
        s += static_cast<double>(c) * static_cast<double>(b.geom.row_stride[d]);
      }
      s = std::abs(s);
      b.stride[j] = depends ? std::max(1.0, s) : 0.0;
    }
  }

  /// Bounding box of the elements the loops l..n-1 touch, per dimension.
  std::vector<double> spans(const BufferStats& b, std::size_t l) const {
    const std::size_t dims = b.indices->size();
    std::vector<double> span(dims, 1);
    LoopRanges ranges; // only for non-affine indices
    bool ranges_ready = false;
    for (std::size_t d = 0; d < dims; ++d) {
      double s = 1;
      if (b.forms[d]) {
        for (std::size_t j = l; j < chain.size(); ++j)
          s += b.coef[d][j] * static_cast<double>(chain[j].extent - 1);
      } else {
        if (!ranges_ready) {
          for (std::size_t j = 0; j < chain.size(); ++j)
            if (!chain[j].virtual_loop)
              ranges.push_back({*chain[j].var, j >= l ? chain[j].extent : 1});
          ranges_ready = true;
        }
        auto range = interval((*b.indices)[d], ranges);
        s = range ? static_cast<double>(range->max - range->min + 1)
                  : static_cast<double>(b.geom.shape[d]);
      }
      const bool virtual_inside =
          chain.virtual_pos >= 0 && static_cast<std::size_t>(chain.virtual_pos) >= l;
      s += static_cast<double>(virtual_inside ? b.spread_all[d] : b.spread_rep[d]);
      span[d] = std::clamp(s, 1.0, static_cast<double>(b.geom.shape[d]));
    }
    return span;
  }

  /// The footprint at every level of the chain, 0 (the whole run) to n (one
  /// execution).
  void footprints(BufferStats& b) {
    b.unique_elems.assign(chain.size() + 1, 1);
    b.unique_lines.assign(chain.size() + 1, 1);
    for (std::size_t l = 0; l <= chain.size(); ++l) {
      auto [elems, lines] = footprint(b, spans(b, l));
      b.unique_elems[l] = elems;
      b.unique_lines[l] = lines;
    }
  }

  /// Lines touched over the whole run, as in Ansor: inner loops in which the
  /// access is invariant touch no new line; the first loop that moves it
  /// moves `stride` elements per iteration.
  void traffic(BufferStats& b) {
    const double all = chain.product(0, chain.size());
    b.bytes = all * b.accesses * b.geom.elem_bytes;
    b.lines = 1;
    for (std::size_t j = chain.size(); j-- > 0;) {
      if (b.stride[j] == 0)
        continue;
      double moves = 1;
      for (std::size_t i = 0; i < j; ++i)
        moves *= chain[i].virtual_loop ? virtual_distinct(b) : static_cast<double>(chain[i].extent);
      // The copies' lines are known exactly; a real loop moves `stride`
      // elements per iteration.
      const double per = chain[j].virtual_loop
                             ? b.virtual_lines
                             : static_cast<double>(chain[j].extent) *
                                   std::min(1.0, b.stride[j] * b.geom.elem_bytes / kCacheLineBytes);
      b.lines = std::max(1.0, moves * per);
      break;
    }
    b.innermost_stride = chain.empty() ? 0 : b.stride.back();
  }

  /// The reuse type, count and distance of the buffer; `all` are the
  /// statement's buffers, whose bytes make the distance.
  void reuse(BufferStats& b, const std::vector<BufferStats>& all) {
    auto bytes_at = [&](std::size_t level) {
      double s = 0;
      for (const BufferStats& o : all)
        s += o.unique_elems[level] * o.geom.elem_bytes;
      return s;
    };
    // Loop multiple read: the innermost loop that does not move the access.
    for (std::size_t j = chain.size(); j-- > 0;) {
      const ChainLoop& c = chain[j];
      if (c.extent <= 1)
        continue;
      double ct = 0;
      if (c.virtual_loop) {
        double distinct = virtual_distinct(b);
        if (distinct < static_cast<double>(c.extent))
          ct = static_cast<double>(c.extent) / distinct;
      } else if (b.stride[j] == 0) {
        ct = static_cast<double>(c.extent);
      }
      if (ct == 0)
        continue;
      b.reuse = Reuse::Loop;
      b.reuse_ct = ct;
      b.reuse_dis_iter = chain.product(j + 1, chain.size());
      b.reuse_dis_bytes = bytes_at(j + 1);
      return;
    }
    // Serial multiple read/write: another statement in a shared loop touches
    // the same buffer.
    for (std::size_t i = g.loops.size() + 1; i-- > 0;) {
      const For* f = i == 0 ? nullptr : g.loops[i - 1];
      auto it = touch.find({f, b.name});
      if (it == touch.end() || it->second < 2)
        continue;
      const std::size_t inner = i == 0 ? 0 : chain.index_of(i - 1) + 1;
      b.reuse = Reuse::Serial;
      b.reuse_ct = it->second;
      b.reuse_dis_iter = chain.product(inner, chain.size());
      b.reuse_dis_bytes = bytes_at(inner);
      return;
    }
  }

private:
  const Group& g;
  const LoopChain& chain;
  const StatementGroups& groups;
  /// (For node or nullptr for the root, buffer) -> groups touching it.
  const TouchCounts& touch;
};

} // namespace

std::vector<BufferStats> buffer_stats(const Group& g, const LoopChain& chain,
                                      const StatementGroups& groups, const TouchCounts& touch) {
  BufferAnalysis analysis(g, chain, groups, touch);
  std::vector<BufferStats> bufs = analysis.collect();
  for (BufferStats& b : bufs) {
    analysis.strides(b);
    analysis.footprints(b);
    analysis.traffic(b);
  }
  // Reuse distances count the bytes of every buffer, so all come first.
  for (BufferStats& b : bufs)
    analysis.reuse(b, bufs);
  return bufs;
}

} // namespace kiln::model::detail
