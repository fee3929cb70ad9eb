#include "base/path_open.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace base {
namespace {

Error OpenError(const std::string& path, int err) {
  return Error(
      Code::kIo,
      "cannot open " + path + ": " +
          (err == ELOOP || err == EXDEV ? std::string("a component is a symlink") : std::strerror(err)),
      "", err);
}

// The fallback for kernels without openat2: every directory component with
// O_NOFOLLOW | O_DIRECTORY, the last with O_NOFOLLOW.
Result<UniqueFd> OpenByComponents(const std::string& path, int flags, mode_t mode, int dirfd) {
  UniqueFd dir;
  int at = dirfd;
  size_t start = 0;
  if (!path.empty() && path[0] == '/') {
    dir.Reset(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir.valid()) return OpenError(path, errno);
    at = dir.get();
    start = 1;
  }
  while (true) {
    while (start < path.size() && path[start] == '/') ++start;
    const size_t slash = path.find('/', start);
    const std::string part =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") return OpenError(path, EXDEV);
    if (slash == std::string::npos || path.find_first_not_of('/', slash) == std::string::npos) {
      int fd = ::openat(at, part.empty() ? "." : part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd < 0) return OpenError(path, errno);
      return UniqueFd(fd);
    }
    int fd = ::openat(at, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return OpenError(path, errno == ENOTDIR ? ELOOP : errno);
    dir.Reset(fd);
    at = dir.get();
    start = slash + 1;
  }
}

}  // namespace

Result<UniqueFd> OpenNoSymlinks(const std::string& path, int flags, mode_t mode, int dirfd) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  // RESOLVE_NO_MAGICLINKS is implied by NO_SYMLINKS; BENEATH only for a
  // relative path, so that "../" cannot leave `dirfd`.
  how.resolve = RESOLVE_NO_SYMLINKS | (path.empty() || path[0] != '/' ? RESOLVE_BENEATH : 0);
  long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  if (errno == ENOSYS) return OpenByComponents(path, flags, how.mode, dirfd);
  return OpenError(path, errno);
}

}  // namespace base
