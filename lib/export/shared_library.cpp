#include "shared_library.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <spawn.h>
#include <sstream>
#include <sys/wait.h>

extern char** environ;

namespace kiln::export_ {

std::optional<Error> link_shared_library(const std::string& output,
                                         const std::vector<std::string>& objects,
                                         const std::string& flags) {
  // The driver rather than ld: it knows where this system keeps libc,
  // libpthread and libm, and which linker to run.
  const char* cc_env = std::getenv("CC");
  const std::string cc = cc_env && *cc_env ? cc_env : "cc";
  std::vector<std::string> words = {cc, "-shared", "-o", output};
  words.insert(words.end(), objects.begin(), objects.end());
  std::istringstream split(flags);
  for (std::string flag; split >> flag;)
    words.push_back(flag);
  std::vector<char*> argv;
  for (std::string& w : words)
    argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int status = posix_spawnp(&pid, cc.c_str(), nullptr, nullptr, argv.data(), environ);
  if (status != 0)
    return Error("shared-library",
                 fmt::format("--shared: cannot run the C compiler '{}' to link '{}': {}; install "
                             "one (or set CC), or leave --shared out and link lib*.a",
                             cc, output, std::strerror(status)));
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0)
    if (errno != EINTR)
      return Error("shared-library",
                   fmt::format("--shared: lost the C compiler '{}': {}", cc, std::strerror(errno)));
  if (!WIFEXITED(wait_status) || WEXITSTATUS(wait_status) != 0)
    return Error("shared-library",
                 fmt::format("--shared: '{}' could not link '{}' (its messages are above); the "
                             "static archive and objects are written",
                             cc, output));
  return std::nullopt;
}

} // namespace kiln::export_
