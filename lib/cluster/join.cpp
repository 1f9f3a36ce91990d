#include "kiln/cluster/transport.h"
#include "kiln/support/install_paths.h"

#include <fmt/format.h>

#include <cstdlib>
#include <dlfcn.h>

namespace kiln::cluster {

bool started_by_mpi_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* v = std::getenv(name); v && *v)
      return true;
  return false;
}

using JoinFunction = Transport* (*)(int version, std::string* error);

Expected<std::unique_ptr<Transport>> join_mpi_job() {
  const std::string plugin = mpi_plugin();
  // Loaded once and never closed: MPI's own libraries stay loaded until
  // the process ends, as MPI expects.
  void* handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return Error("no-mpi",
                 fmt::format("this kiln was started by mpirun, but it cannot load its MPI plugin "
                             "'{}' ({}); build kiln where libopenmpi-dev is installed (the build "
                             "turns MPI on when it finds it: -DKILN_MPI=ON), or set "
                             "KILN_MPI_PLUGIN to the plugin's path",
                             plugin, dlerror()));
  auto join = reinterpret_cast<JoinFunction>(dlsym(handle, "kiln_mpi_join"));
  if (!join)
    return Error("no-mpi",
                 fmt::format("'{}' is not kiln's MPI plugin (it has no kiln_mpi_join)", plugin));
  std::string error;
  Transport* transport = join(kTransportVersion, &error);
  if (!transport)
    return Error("no-mpi", fmt::format("MPI cannot start: {}", error));
  return std::unique_ptr<Transport>(transport);
}

} // namespace kiln::cluster
