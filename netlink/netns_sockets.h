// The network namespace a socket of another task was made in. A socket keeps its namespace alive though no
// task is in it and no descriptor or mount refers to the namespace itself: a process that made a socket
// inside a pod's netns and left it (setns back, or a socket passed to it) keeps that netns.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/fd.h"
#include "netlink/netns_liveness.h"

namespace netlink {

/// What one socket says of the namespace `id`.
enum class SocketVerdict {
  kOther,    ///< made in another namespace, or gone meanwhile
  kOurs,     ///< made in `id`: it keeps `id` alive
  kReused,   ///< made in a namespace with id's device and inode but another cookie: `id` is gone
  kUnknown,  ///< cannot be looked at (`why` says why)
};

/// The sockets of one task, looked at through a pidfd: pidfd_getfd (Linux
/// 5.6, ptrace access to the task: root with CAP_SYS_PTRACE) copies the
/// socket, SIOCGSKNS names its namespace, SO_NETNS_COOKIE tells a reused inode number apart.
class TaskSockets {
 public:
  explicit TaskSockets(pid_t pid);
  /// Socket `fd` of the task (its /proc/<pid>/fd/<fd> reads socket:[...]).
  /// A task or descriptor that is gone meanwhile is kOther; `why` receives
  /// what failed for kUnknown ("pidfd_getfd of task 12 fd 3: Operation not permitted").
  SocketVerdict Of(int fd, const NetnsId& id, std::string* why);

 private:
  pid_t pid_;
  base::UniqueFd pidfd_;
  int open_errno_ = 0;
};

}  // namespace netlink
