#include "kiln/support/install_paths.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <link.h>
#include <mutex>
#include <system_error>

namespace fs = std::filesystem;

namespace kiln {

namespace {

/// The file of the program or shared library this code was loaded from.
struct CodeSearch {
  std::uintptr_t address;
  fs::path file;
  bool found = false;
};

int find_code(dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<CodeSearch*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[i];
    if (segment.p_type != PT_LOAD)
      continue;
    std::uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
    if (search->address >= begin && search->address < begin + segment.p_memsz) {
      // The main program has no name in the list.
      search->file = info->dlpi_name && *info->dlpi_name ? fs::path(info->dlpi_name)
                                                         : fs::path("/proc/self/exe");
      search->found = true;
      return 1;
    }
  }
  return 0;
}

fs::path code_file() {
  CodeSearch search{reinterpret_cast<std::uintptr_t>(&find_code), {}};
  dl_iterate_phdr(find_code, &search);
  if (!search.found)
    return {};
  std::error_code ec;
  fs::path resolved = fs::canonical(search.file, ec);
  return ec ? fs::path() : resolved;
}

bool inside(const fs::path& file, const fs::path& folder) {
  auto [end, _] = std::mismatch(folder.begin(), folder.end(), file.begin(), file.end());
  return end == folder.end();
}

bool in_build_tree() {
  std::error_code ec;
  fs::path build = fs::weakly_canonical(KILN_BUILD_DIR, ec);
  fs::path code = code_file();
  return !ec && !code.empty() && inside(code, build);
}

std::string from_environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : std::string();
}

bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

/// The install prefix above the code's file that holds `relative` (the
/// code is in bin/, lib/ or lib/<multiarch>/), else the configured prefix.
fs::path prefix_holding(const fs::path& relative) {
  fs::path code = code_file();
  if (!code.empty()) {
    fs::path dir = code.parent_path();
    for (int up = 0; up < 3 && dir.has_relative_path(); ++up) {
      dir = dir.parent_path();
      if (file_exists(dir / relative))
        return dir;
    }
  }
  return fs::path(KILN_INSTALL_PREFIX);
}

/// set_install_prefix's; guarded, as hosts may set it from any thread.
std::mutex prefix_mutex;
std::string explicit_prefix;

std::string given_prefix() {
  std::lock_guard<std::mutex> lock(prefix_mutex);
  return explicit_prefix;
}

} // namespace

void set_install_prefix(const std::string& prefix) {
  std::lock_guard<std::mutex> lock(prefix_mutex);
  explicit_prefix = prefix;
}

std::string install_prefix() {
  if (std::string given = given_prefix(); !given.empty())
    return given;
  if (in_build_tree())
    return {};
  return prefix_holding("share/kiln").string();
}

std::string data_dir() {
  if (std::string env = from_environment("KILN_DATA_DIR"); !env.empty())
    return env;
  if (std::string given = given_prefix(); !given.empty())
    return (fs::path(given) / "share/kiln").string();
  if (in_build_tree())
    return KILN_SOURCE_DATA_DIR;
  return (prefix_holding("share/kiln") / "share/kiln").string();
}

std::string worker_executable() {
  if (std::string env = from_environment("KILN_WORKER"); !env.empty())
    return env;
  const fs::path relative = "libexec/kiln/kiln-worker";
  if (std::string given = given_prefix(); !given.empty())
    return (fs::path(given) / relative).string();
  if (in_build_tree())
    return KILN_BUILD_DIR "/kiln-worker";
  return (prefix_holding(relative) / relative).string();
}

std::string mpi_plugin() {
  if (std::string env = from_environment("KILN_MPI_PLUGIN"); !env.empty())
    return env;
  return (fs::path(worker_executable()).parent_path() / "libkiln_mpi.so").string();
}

} // namespace kiln
