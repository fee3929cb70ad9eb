#include "netlink/netns_liveness.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "base/fd.h"
#include "base/file.h"
#include "netlink/netns.h"
#include "netlink/netns_sockets.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

namespace netlink {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

bool IsNumber(const char* s) { return *s && std::strspn(s, "0123456789") == std::strlen(s); }

// The numeric entries of `dir` (pids, tids, fd numbers); nullopt when it cannot be listed.
std::optional<std::vector<std::string>> Numbers(const std::string& dir) {
  DirPtr d(::opendir(dir.c_str()));
  if (!d) return std::nullopt;
  std::vector<std::string> out;
  while (dirent* e = ::readdir(d.get()))
    if (IsNumber(e->d_name)) out.emplace_back(e->d_name);
  return out;
}

bool SameNs(const std::string& path, const NetnsId& id) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_dev == id.dev && st.st_ino == id.ino;
}

// mountinfo writes space, tab, newline and backslash in paths as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out += static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The mount points (as the table's task sees them) of the nsfs mounts of
// net:[ino] in the mount table `mountinfo`: the fourth field (the mount's
// root) of such a line names the namespace, the fifth is where it is.
std::vector<std::string> NsMounts(const std::string& mountinfo, const std::string& tag) {
  std::vector<std::string> out;
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" " + tag + " ") == std::string::npos || line.find(" - nsfs ") == std::string::npos)
      continue;
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    if (fields >> id >> parent >> devno >> root >> point && root == tag) out.push_back(Unescape(point));
  }
  return out;
}

// Whether the open descriptor /proc/<pid>/fd/<n> refers to the namespace: its link reads net:[ino], or
// (opened through a bind mount) a path told by the inode it leads to, looked at with AT_STATX_DONT_SYNC so
// that a stuck FUSE or NFS file cannot hold us up. A socket is told apart for its own look (netns_sockets.h).
enum class Fd { kOther, kRefers, kSocket };
Fd FdRefersTo(const std::string& link, const std::string& tag, const NetnsId& id) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0) return Fd::kOther;
  const std::string_view target(buf, static_cast<size_t>(n));
  if (target == tag) return Fd::kRefers;
  if (target.starts_with("socket:[")) return Fd::kSocket;
  for (std::string_view skip : {"pipe:[", "anon_inode:", "net:[", "/dev/"})
    if (target.starts_with(skip)) return Fd::kOther;
  struct statx st {};
  if (::statx(AT_FDCWD, link.c_str(), AT_STATX_DONT_SYNC, STATX_INO, &st) != 0) return Fd::kOther;
  const bool ours = st.stx_ino == id.ino && makedev(st.stx_dev_major, st.stx_dev_minor) == id.dev;
  return ours ? Fd::kRefers : Fd::kOther;
}

// What a handle with the recorded device and inode says: inode numbers are unique among live namespaces but
// reused, so a live one with another cookie means ours is gone.
enum class Match { kOurs, kReused };
Match Confirm(const std::string& handle, const NetnsId& id) {
  if (id.cookie == 0) return Match::kOurs;  // recorded without one: cannot tell
  auto cookie = NetnsCookieAt(handle);
  if (!cookie || *cookie == id.cookie) return Match::kOurs;
  return Match::kReused;
}

}  // namespace

base::Result<NetnsId> NetnsIdOf(int fd, uint64_t cookie) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return base::SysError("fstat of a network namespace", errno);
  NetnsId id{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
  id.cookie = cookie != 0 ? cookie : NetnsCookieAt("/proc/self/fd/" + std::to_string(fd)).value_or(0);
  return id;
}

uint64_t SocketNetnsCookie(int fd) {
  uint64_t cookie = 0;
  socklen_t len = sizeof cookie;
  if (::getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len) != 0 || len != sizeof cookie) return 0;
  return cookie;
}

std::optional<uint64_t> NetnsCookieAt(const std::string& handle) {
  auto ns = Netns::Open(handle, "netns");
  if (!ns.ok()) return std::nullopt;
  // A socket made inside the namespace carries its cookie (Linux 5.14).
  base::UniqueFd sock;
  {
    auto in = NetnsSwitch::Enter(*ns);
    if (!in.ok()) return std::nullopt;
    sock = base::UniqueFd(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  }
  if (!sock.valid()) return std::nullopt;
  const uint64_t cookie = SocketNetnsCookie(sock.get());
  if (cookie == 0) return std::nullopt;
  return cookie;
}

bool NetnsMayExist(const std::optional<NetnsId>& id, const std::string& path, const std::string& proc_root,
                   std::string* kept_by) {
  std::string ignored;
  std::string& why = kept_by ? *kept_by : ignored;
  if (!id) {
    // All an older state has is the path: gone when it no longer opens as a
    // network namespace (missing, or a bind-mount target left unmounted).
    why = "its path " + path + " (no identity recorded)";
    return !path.empty() && Netns::Open(path, "the recorded netns").ok();
  }
  // A handle that leads to the recorded device and inode: ours keeps it
  // alive, another's (the number reused) proves ours gone.
  auto found = [&](const std::string& handle, const std::string& what) {
    const bool ours = Confirm(handle, *id) == Match::kOurs;
    why = ours ? what : "";
    return ours;
  };
  if (!path.empty() && SameNs(path, *id)) return found(path, "its path " + path);
  auto pids = Numbers(proc_root);
  why = proc_root + " cannot be listed";
  if (!pids) return true;
  const std::string tag = "net:[" + std::to_string(id->ino) + "]";
  std::set<uint64_t> mount_namespaces;
  for (const std::string& pid : *pids) {
    const std::string dir = proc_root + "/" + pid;
    // setns() moves one thread: every thread's namespace counts. A task
    // that exits meanwhile simply has nothing left to look at.
    if (SameNs(dir + "/ns/net", *id)) return found(dir + "/ns/net", "task " + pid);
    if (auto tids = Numbers(dir + "/task"))
      for (const std::string& tid : *tids) {
        const std::string ns = dir + "/task/" + tid + "/ns/net";
        if (tid != pid && SameNs(ns, *id)) return found(ns, "task " + tid);
      }
    if (auto fds = Numbers(dir + "/fd")) {
      std::optional<TaskSockets> sockets;  // opened at the task's first socket
      for (const std::string& fd : *fds) {
        const std::string link = dir + "/fd/" + fd;
        const Fd kind = FdRefersTo(link, tag, *id);
        if (kind == Fd::kRefers) return found(link, "a descriptor of task " + pid);
        if (kind != Fd::kSocket || proc_root != "/proc") continue;
        if (!sockets) sockets.emplace(static_cast<pid_t>(std::stoul(pid)));
        std::string failed;
        switch (sockets->Of(std::stoi(fd), *id, &failed)) {
          case SocketVerdict::kOther: break;
          case SocketVerdict::kOurs:
            why = "a socket made in it, descriptor " + fd + " of task " + pid;
            return true;
          case SocketVerdict::kReused: why.clear(); return false;
          case SocketVerdict::kUnknown:
            why = "a socket that cannot be looked at (" + failed + ")";
            return true;
        }
      }
    }
    // Bind mounts live in mount namespaces; a runtime may keep its netns
    // mounts in a private one. Each mount namespace's table is read once.
    struct stat mnt {};
    if (::stat((dir + "/ns/mnt").c_str(), &mnt) != 0 || !mount_namespaces.insert(mnt.st_ino).second) continue;
    auto table = base::ReadKernelFile(dir + "/mountinfo", 16 << 20);
    if (!table.ok()) continue;
    if (const auto points = NsMounts(*table, tag); !points.empty())
      return found(dir + "/root" + points.front(),
                   "a mount at " + points.front() + " in the mount namespace of task " + pid);
  }
  why.clear();
  return false;
}

}  // namespace netlink
