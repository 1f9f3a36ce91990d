// Where kiln finds its files at run time: the shipped data (the default
// cost model) and the measurement worker executable. A kiln that is
// installed finds them relative to its install prefix, wherever the prefix
// was moved; a kiln run from its build tree finds them in the source and
// build trees. Environment variables override both (docs/library.md).
#ifndef KILN_SUPPORT_INSTALL_PATHS_H
#define KILN_SUPPORT_INSTALL_PATHS_H

#include <string>

namespace kiln {

/// Where kiln is installed, for a program that links a static libkiln
/// installed with `cmake --install --prefix P` to another prefix than the
/// one it was configured with: the library cannot tell where it was
/// installed then (the CMake package defines KILN_PACKAGE_PREFIX for such
/// programs; docs/library.md). Overrides the
/// prefix data_dir and worker_executable find, not the environment.
void set_install_prefix(const std::string& prefix);

/// The folder of kiln's data (`kiln-default.model`, the datasets):
/// $KILN_DATA_DIR when set; else `<set_install_prefix>/share/kiln`; else,
/// from the build tree, the source tree's
/// `data/`; else `<prefix>/share/kiln`, the prefix being the folder above
/// the program or shared library that holds kiln's code (bin/kiln,
/// lib/libkiln.so), and failing that the prefix kiln was configured with.
std::string data_dir();

/// The path of the `kiln-worker` executable that measures kernels in a
/// separate process: $KILN_WORKER when set; else under the prefix given to
/// set_install_prefix; else the build tree's; else
/// `<prefix>/libexec/kiln/kiln-worker`, the prefix found as for data_dir.
std::string worker_executable();

/// The MPI plugin (`libkiln_mpi.so`, cluster/transport.h) a kiln started by
/// mpirun loads: $KILN_MPI_PLUGIN when set; else next to kiln-worker
/// (worker_executable's folder).
std::string mpi_plugin();

/// The install prefix of the program or shared library holding kiln's code,
/// as data_dir finds it (empty when it runs from its build tree).
std::string install_prefix();

} // namespace kiln

#endif // KILN_SUPPORT_INSTALL_PATHS_H
