#include "auto_unroll.h"

#include "kiln/schedule/stmt_visitor.h"

#include <algorithm>
#include <limits>

namespace kiln::schedule {

/// auto_unroll never expands a loop into more than this many scalar lanes
/// of stores (128 AVX-512 or 256 AVX2 f32 vectors: a 4x64 register tile
/// unrolled 8 times along k). Larger unrolled bodies spill registers, so
/// they are slow kernels, and LLVM takes up to seconds to compile each one.
constexpr std::int64_t kMaxAutoUnrollLanes = 2048;

namespace {

/// How StepCounter counts a vector loop.
enum class VectorCount {
  Statements, ///< one step per statement: its lanes run together
  Lanes,      ///< one step per lane: the size of the code it becomes
};

/// Statements executed by one run of a statement (a loop counts extent ×
/// body, an if its larger side).
class StepCounter : public StmtVisitor {
public:
  explicit StepCounter(VectorCount vectors) : vectors_(vectors) {}

  std::int64_t steps(const Stmt& stmt) {
    std::int64_t outer = steps_;
    steps_ = 0;
    visit(stmt);
    std::swap(outer, steps_);
    return outer;
  }

  using StmtVisitor::visit;

  void visit(const For* f) override {
    bool one_step = f->for_kind == ForKind::Vectorized && vectors_ == VectorCount::Statements;
    add(saturating_mul(one_step ? 1 : f->extent, steps(f->body)));
  }

  void visit(const Store*) override { add(1); }

  void visit(const IfThenElse* i) override {
    add(std::max(steps(i->then_case), steps(i->else_case)));
  }

  /// Counts saturate: a nest of huge extents has "too many" steps, not a
  /// wrapped negative count.
  static std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
    std::int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::int64_t>::max() : r;
  }

private:
  void add(std::int64_t n) {
    if (__builtin_add_overflow(steps_, n, &steps_))
      steps_ = std::numeric_limits<std::int64_t>::max();
  }

  VectorCount vectors_;
  std::int64_t steps_ = 0;
};

class AutoUnroller : public StmtMutator {
public:
  explicit AutoUnroller(const AutoUnrollSteps& steps) : steps_(steps) {}

  using StmtMutator::mutate;

protected:
  Stmt mutate(const For* f, const Stmt& self) override {
    Stmt body = mutate(f->body);
    ForKind kind = f->for_kind;
    if (kind == ForKind::Serial && fits(f->extent, body, max_step(f)))
      kind = ForKind::Unrolled;
    if (kind == f->for_kind && body.same_as(f->body))
      return self;
    return For::make(f->var, f->extent, kind, body);
  }

private:
  std::int64_t max_step(const For* f) const {
    auto it = steps_.find(f);
    return it == steps_.end() ? 0 : it->second;
  }

  static bool fits(std::int64_t extent, const Stmt& body, std::int64_t max_step) {
    if (max_step <= 0)
      return false;
    std::int64_t statements = 0, lanes = 0;
    return !__builtin_mul_overflow(extent, StepCounter(VectorCount::Statements).steps(body),
                                   &statements) &&
           statements <= max_step &&
           !__builtin_mul_overflow(extent, StepCounter(VectorCount::Lanes).steps(body), &lanes) &&
           lanes <= kMaxAutoUnrollLanes;
  }

  const AutoUnrollSteps& steps_;
};

} // namespace

Stmt mark_auto_unroll(const Stmt& stmt, const AutoUnrollSteps& steps) {
  if (steps.empty())
    return stmt;
  return AutoUnroller(steps).mutate(stmt);
}

} // namespace kiln::schedule
