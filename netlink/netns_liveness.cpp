#include "netlink/netns_liveness.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "base/file.h"
#include "netlink/netns.h"

namespace netlink {
namespace {

struct DirCloser {
  void operator()(DIR* d) const { ::closedir(d); }
};
using DirPtr = std::unique_ptr<DIR, DirCloser>;

bool IsNumber(const char* s) { return *s && std::strspn(s, "0123456789") == std::strlen(s); }

// The numeric entries of `dir` (pids, tids, fd numbers); nullopt when it
// cannot be listed.
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

// Whether the mount table `mountinfo` has an nsfs mount of net:[ino]: the
// fourth field (the mount's root) of such a line names the namespace.
bool MountsNs(const std::string& mountinfo, const std::string& tag) {
  size_t at = 0;
  while ((at = mountinfo.find(" " + tag + " ", at)) != std::string::npos) {
    const size_t eol = mountinfo.find('\n', at);
    const size_t bol = mountinfo.rfind('\n', at);
    const std::string line = mountinfo.substr(
        bol == std::string::npos ? 0 : bol + 1,
        (eol == std::string::npos ? mountinfo.size() : eol) - (bol == std::string::npos ? 0 : bol + 1));
    if (line.find(" - nsfs ") != std::string::npos) return true;
    at += tag.size();
  }
  return false;
}

// Whether the open descriptor /proc/<pid>/fd/<n> refers to the namespace.
// Its link reads net:[ino] when it was opened through /proc/<pid>/ns/net,
// but the mount point's path when opened through a bind mount (or "/" once
// that is detached): those are told by the inode they lead to. Sockets,
// pipes and anonymous inodes are no namespace; the rest is looked at with
// AT_STATX_DONT_SYNC, so a stuck FUSE or NFS file cannot hold us up.
bool FdRefersTo(const std::string& link, const std::string& tag, const NetnsId& id) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
  if (n <= 0) return false;
  const std::string_view target(buf, static_cast<size_t>(n));
  if (target == tag) return true;
  for (std::string_view skip : {"socket:[", "pipe:[", "anon_inode:", "net:[", "/dev/"})
    if (target.starts_with(skip)) return false;
  struct statx st {};
  if (::statx(AT_FDCWD, link.c_str(), AT_STATX_DONT_SYNC, STATX_INO, &st) != 0) return false;
  return st.stx_ino == id.ino && makedev(st.stx_dev_major, st.stx_dev_minor) == id.dev;
}

}  // namespace

base::Result<NetnsId> NetnsIdOf(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    return base::Error(base::Code::kIo, std::string("fstat of a network namespace: ") + std::strerror(err),
                       {}, err);
  }
  return NetnsId{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
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
  why = "its path " + path;
  if (!path.empty() && SameNs(path, *id)) return true;
  auto pids = Numbers(proc_root);
  why = proc_root + " cannot be listed";
  if (!pids) return true;
  const std::string tag = "net:[" + std::to_string(id->ino) + "]";
  std::set<uint64_t> mount_namespaces;
  for (const std::string& pid : *pids) {
    const std::string dir = proc_root + "/" + pid;
    // setns() moves one thread: every thread's namespace counts. A task
    // that exits meanwhile simply has nothing left to look at.
    why = "task " + pid;
    if (SameNs(dir + "/ns/net", *id)) return true;
    if (auto tids = Numbers(dir + "/task"))
      for (const std::string& tid : *tids)
        if (tid != pid && SameNs(dir + "/task/" + tid + "/ns/net", *id)) return true;
    why = "a descriptor of task " + pid;
    if (auto fds = Numbers(dir + "/fd"))
      for (const std::string& fd : *fds)
        if (FdRefersTo(dir + "/fd/" + fd, tag, *id)) return true;
    // Bind mounts live in mount namespaces; a runtime may keep its netns
    // mounts in a private one. Each mount namespace's table is read once.
    struct stat mnt {};
    if (::stat((dir + "/ns/mnt").c_str(), &mnt) != 0 || !mount_namespaces.insert(mnt.st_ino).second) continue;
    why = "a mount in the mount namespace of task " + pid;
    auto table = base::ReadKernelFile(dir + "/mountinfo", 16 << 20);
    if (table.ok() && MountsNs(*table, tag)) return true;
  }
  why.clear();
  return false;
}

}  // namespace netlink
