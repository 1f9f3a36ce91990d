// Where kiln finds its files at run time: the shipped data (the default
// cost model) and the measurement worker executable. A kiln that is
// installed finds them relative to its install prefix, wherever the prefix
// was moved; a kiln run from its build tree finds them in the source and
// build trees. Environment variables override both (docs/library.md).
#ifndef KILN_SUPPORT_INSTALL_PATHS_H
#define KILN_SUPPORT_INSTALL_PATHS_H

#include <string>

namespace kiln {

/// The folder of kiln's data (`kiln-default.model`, the datasets):
/// $KILN_DATA_DIR when set; else, from the build tree, the source tree's
/// `data/`; else `<prefix>/share/kiln`, the prefix being the folder above
/// the program or shared library that holds kiln's code (bin/kiln,
/// lib/libkiln.so), and failing that the prefix kiln was configured with.
std::string data_dir();

/// The path of the `kiln-worker` executable that measures kernels in a
/// separate process: $KILN_WORKER when set; else the build tree's; else
/// `<prefix>/libexec/kiln/kiln-worker`, the prefix found as for data_dir.
std::string worker_executable();

/// The install prefix of the program or shared library holding kiln's code,
/// as data_dir finds it (empty when it runs from its build tree).
std::string install_prefix();

} // namespace kiln

#endif // KILN_SUPPORT_INSTALL_PATHS_H
