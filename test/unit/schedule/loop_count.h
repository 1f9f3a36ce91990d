// Test-only: counting the loops of a lowered function, for tests that check
// the shape of a nest (how many parallel loops a fused schedule has).
#ifndef KILN_TEST_UNIT_SCHEDULE_LOOP_COUNT_H
#define KILN_TEST_UNIT_SCHEDULE_LOOP_COUNT_H

#include "kiln/schedule/loop_nest.h"
#include "kiln/schedule/stmt_visitor.h"

namespace kiln::test {

/// The loops of `kind` in the kernel and its prepack function.
inline int count_loops(const schedule::LoweredFunc& func, schedule::ForKind kind) {
  struct Counter : schedule::StmtVisitor {
    schedule::ForKind kind;
    int count = 0;
    using StmtVisitor::visit;
    void visit(const schedule::For* f) override {
      count += f->for_kind == kind;
      StmtVisitor::visit(f);
    }
  } counter;
  counter.kind = kind;
  counter.visit(func.body);
  counter.visit(func.prepack);
  return counter.count;
}

} // namespace kiln::test

#endif // KILN_TEST_UNIT_SCHEDULE_LOOP_COUNT_H
