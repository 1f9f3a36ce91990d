#include "kiln/space/space_params.h"

#include "kiln/ir/type.h"

namespace kiln::space {

SpaceParams space_params(const Target& target) {
  SpaceParams p;
  p.vector_lanes = target.vector_lanes(ir::bits(ir::ScalarType::F32));
  p.cores = target.cores;
  return p;
}

} // namespace kiln::space
