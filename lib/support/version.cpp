#include "kiln/support/version.h"

namespace kiln {

const char* version() {
  return KILN_VERSION;
}

} // namespace kiln
