#include "loop_chain.h"

namespace kiln::model::detail {

LoopChain::LoopChain(const Group& g) {
  for (std::size_t i = 0; i < g.loops.size(); ++i) {
    if (i == g.prefix && g.copies > 1) {
      virtual_pos = static_cast<int>(loops.size());
      loops.push_back({nullptr, g.copies, schedule::ForKind::Unrolled, true});
    }
    const schedule::For* f = g.loops[i];
    loops.push_back({&f->var, f->extent, f->for_kind, false});
  }
  if (g.copies > 1 && virtual_pos < 0) {
    virtual_pos = static_cast<int>(loops.size());
    loops.push_back({nullptr, g.copies, schedule::ForKind::Unrolled, true});
  }
}

} // namespace kiln::model::detail
