#include "netlink/netns_sockets.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace netlink {
namespace {

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

std::string Failed(const std::string& what, int err) { return what + ": " + std::strerror(err); }

}  // namespace

TaskSockets::TaskSockets(pid_t pid) : pid_(pid) {
  pidfd_ = base::UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!pidfd_.valid()) open_errno_ = errno;
}

SocketVerdict TaskSockets::Of(int fd, const NetnsId& id, std::string* why) {
  const std::string who = "task " + std::to_string(pid_) + " fd " + std::to_string(fd);
  if (!pidfd_.valid()) {
    if (open_errno_ == ESRCH) return SocketVerdict::kOther;  // the task has exited
    if (why) *why = Failed("pidfd_open of task " + std::to_string(pid_), open_errno_);
    return SocketVerdict::kUnknown;
  }
  base::UniqueFd copy(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd_.get(), fd, 0)));
  if (!copy.valid()) {
    const int err = errno;
    if (err == ESRCH || err == EBADF) return SocketVerdict::kOther;  // exited, or closed the fd
    if (why) *why = Failed("pidfd_getfd of " + who, err);
    return SocketVerdict::kUnknown;
  }
  base::UniqueFd ns(::ioctl(copy.get(), SIOCGSKNS));
  if (!ns.valid()) {
    const int err = errno;
    // Not a socket of a protocol family with a namespace (replaced meanwhile).
    if (err == ENOTTY || err == ENOTSOCK || err == EINVAL) return SocketVerdict::kOther;
    if (why) *why = Failed("SIOCGSKNS on " + who, err);
    return SocketVerdict::kUnknown;
  }
  struct stat st {};
  if (::fstat(ns.get(), &st) != 0) {
    if (why) *why = Failed("fstat of the netns of " + who, errno);
    return SocketVerdict::kUnknown;
  }
  if (st.st_dev != id.dev || st.st_ino != id.ino) return SocketVerdict::kOther;
  if (id.cookie == 0) return SocketVerdict::kOurs;
  const uint64_t cookie = SocketNetnsCookie(copy.get());
  if (cookie == 0 || cookie == id.cookie) return SocketVerdict::kOurs;
  return SocketVerdict::kReused;
}

}  // namespace netlink
