#include "statement_groups.h"

#include "buffer_geometry.h"
#include "statement_scan.h"

#include "kiln/schedule/stmt_visitor.h"

#include <algorithm>
#include <limits>

namespace kiln::model::detail {

using schedule::Allocate;
using schedule::Buffer;
using schedule::For;
using schedule::IfThenElse;
using schedule::Stmt;
using schedule::Store;

const Buffer* StatementGroups::find_buffer(std::string_view name) const {
  auto it = buffers.find(name);
  return it == buffers.end() ? nullptr : it->second;
}

namespace {

/// Walks a nest once. A statement joins the group of the statements it is a
/// copy of: same enclosing context (loops, allocations, conditions, hashed
/// on the way down into `ctx_`), same stored buffer, same value shape.
class GroupBuilder : public schedule::StmtVisitor {
public:
  explicit GroupBuilder(const schedule::LoweredFunc& func) {
    for (const Buffer& b : func.args)
      out_.buffers.emplace(b.name, &b);
  }

  using StmtVisitor::visit;

  void visit(const For* f) override {
    loops_.push_back(f);
    visit_in(f->body, mix(mix(mix(ctx_, hash_str(f->var)), static_cast<std::uint64_t>(f->extent)),
                          static_cast<std::uint64_t>(f->for_kind)));
    loops_.pop_back();
  }

  void visit(const Allocate* a) override {
    out_.buffers[std::string_view(a->buffer.name)] = &a->buffer;
    allocs_.emplace_back(a, static_cast<int>(loops_.size()));
    visit_in(a->body, mix(mix(ctx_, 3), hash_str(a->buffer.name)));
    allocs_.pop_back();
  }

  void visit(const IfThenElse* i) override {
    ifs_.emplace_back(i, static_cast<int>(loops_.size()));
    Scanner cond;
    const std::uint64_t c = mix(mix(ctx_, 4), cond.hash(i->cond));
    visit_in(i->then_case, mix(c, 5));
    visit_in(i->else_case, mix(c, 6));
    ifs_.pop_back();
  }

  void visit(const Store* st) override { add_store(st, ctx_); }

  StatementGroups take() { return std::move(out_); }

private:
  /// Visits `s` with the context `ctx`, then restores the current one.
  void visit_in(const Stmt& s, std::uint64_t ctx) {
    const std::uint64_t saved = ctx_;
    ctx_ = ctx;
    visit(s);
    ctx_ = saved;
  }

  void add_store(const Store* st, std::uint64_t ctx) {
    scan_.clear();
    scan_.store(st->indices);
    const std::uint64_t key =
        mix(mix(mix(ctx, hash_str(st->buffer)), scan_.hash(st->value)), st->indices.size());
    std::vector<Group>& groups = out_.groups;
    auto [it, inserted] = index_.try_emplace(key, static_cast<int>(groups.size()));
    if (inserted) {
      Group g;
      g.store = st;
      g.loops = loops_;
      g.allocs = allocs_;
      g.ifs = ifs_;
      g.prefix = loops_.size();
      g.accesses.push_back({st->buffer, true, &st->indices});
      for (const ir::Load* l : scan_.loads)
        g.accesses.push_back({l->tensor, false, &l->indices});
      g.offsets.resize(g.accesses.size());
      for (std::size_t a = 0; a < g.accesses.size(); ++a)
        record(g, a, true);
      groups.push_back(std::move(g));
      return;
    }
    Group& g = groups[static_cast<std::size_t>(it->second)];
    // A hash collision between different statements would show here; such a
    // statement still counts as a copy, but its constants are not recorded.
    if (scan_.loads.size() + 1 != g.accesses.size())
      return;
    ++g.copies;
    std::size_t p = 0;
    while (p < g.prefix && p < loops_.size() && g.loops[p] == loops_[p])
      ++p;
    g.prefix = p;
    for (std::size_t a = 0; a < g.accesses.size(); ++a)
      record(g, a, false);
  }

  /// Records the constants the scanner found for access `a` of the statement.
  void record(Group& g, std::size_t a, bool first) {
    AccessOffsets& o = g.offsets[a];
    const std::size_t dims = a == 0 ? g.store->indices.size() : scan_.loads[a - 1]->indices.size();
    const std::int64_t* consts = scan_.consts.data() + (a == 0 ? 0 : scan_.bases[a - 1]);
    if (first) {
      o.min.assign(dims, std::numeric_limits<std::int64_t>::max());
      o.max.assign(dims, std::numeric_limits<std::int64_t>::min());
      o.rep.assign(consts, consts + dims);
      // The buffers allocated so far: an allocation is recorded on the way down.
      o.row_stride = geometry(out_.find_buffer(g.accesses[a].buffer), dims).row_stride;
    }
    if (o.min.size() != dims)
      return;
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < dims; ++d) {
      o.min[d] = std::min(o.min[d], consts[d]);
      o.max[d] = std::max(o.max[d], consts[d]);
      flat += consts[d] * o.row_stride[d];
    }
    o.flat.push_back(flat);
  }

  StatementGroups out_;
  std::unordered_map<std::uint64_t, int> index_; ///< group of each key
  std::uint64_t ctx_ = 0; ///< hash of the enclosing loops, allocations and conditions
  std::vector<const For*> loops_;
  std::vector<std::pair<const Allocate*, int>> allocs_;
  std::vector<std::pair<const IfThenElse*, int>> ifs_;
  Scanner scan_;
};

} // namespace

StatementGroups group_statements(const schedule::LoweredFunc& func) {
  GroupBuilder gb(func);
  gb.visit(func.body);
  return gb.take();
}

TouchCounts count_touches(const std::vector<Group>& groups) {
  TouchCounts touch;
  for (const Group& g : groups) {
    std::vector<std::string_view> names;
    for (const Access& a : g.accesses)
      if (std::find(names.begin(), names.end(), a.buffer) == names.end())
        names.push_back(a.buffer);
    for (std::string_view n : names) {
      ++touch[{nullptr, n}];
      for (const For* f : g.loops)
        ++touch[{f, n}];
    }
  }
  return touch;
}

} // namespace kiln::model::detail
