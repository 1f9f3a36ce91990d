// kiln's version, written into every record.
#ifndef KILN_SUPPORT_VERSION_H
#define KILN_SUPPORT_VERSION_H

namespace kiln {

/// "major.minor.patch", from the project version in CMakeLists.txt.
const char* version();

} // namespace kiln

#endif
