#include "base/fault.h"

#ifdef ERDMA_CNI_FAULT_HOOKS
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

namespace base::fault {

Status Point(std::string_view when, std::string_view what) {
  static std::map<std::string, int> passes;
  std::string name = std::string(when) + ":" + std::string(what);
  name += "#" + std::to_string(++passes[name]);
  if (const char* trace = std::getenv("ERDMA_CNI_FAULT_TRACE"); trace && *trace) {
    // O_APPEND: one write per line, so points of parallel runs never interleave.
    const int fd = ::open(trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      const std::string line = name + "\n";
      (void)!::write(fd, line.data(), line.size());
      ::close(fd);
    }
  }
  const char* chosen = std::getenv("ERDMA_CNI_FAULT");
  if (!chosen || name != chosen) return Ok();
  const char* action = std::getenv("ERDMA_CNI_FAULT_ACTION");
  if (action && std::string_view(action) == "kill") ::kill(::getpid(), SIGKILL);
  return Error(Code::kInternal, "injected fault at " + name);
}

}  // namespace base::fault
#endif
