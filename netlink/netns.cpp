#include "netlink/netns.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "base/file.h"
#include "base/phase.h"

namespace netlink {
namespace {

using base::Code;
using base::Error;
using base::UniqueFd;

std::string ErrnoText(int err) { return std::strerror(err); }

// The thread's own namespace, not the process's: setns() switches only the
// calling thread, and /proc/self names the thread-group leader.
constexpr const char* kThreadNetns = "/proc/thread-self/ns/net";

// How many NetnsSwitch of this thread are in effect: at 0 the thread is in
// its own namespace, the one Current() then opens.
thread_local int t_switched = 0;
// A NetnsHome's fd: where a switch from the thread's own namespace returns.
thread_local int t_home = -1;

}  // namespace

base::Result<Netns> Netns::Current() {
  const char* path = kThreadNetns;
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    return Error(Code::kIo, std::string("opening ") + path + ": " + ErrnoText(err) + " (is /proc mounted?)",
                 {}, err);
  }
  return Netns(std::move(fd), path, /*current=*/t_switched == 0);
}

base::Result<Netns> Netns::Open(const std::string& path, const std::string& what) {
  const base::phase::Scope phase("netns");
  if (path.empty()) {
    return Error(Code::kInvalidEnv, what +
                                        ": the path is empty (set it to the pod's network namespace, e.g. "
                                        "/var/run/netns/NAME or /proc/PID/ns/net)");
  }
  // O_NONBLOCK and O_NOCTTY: CNI_NETNS may name a FIFO (open would wait for
  // a writer) or a terminal; both are refused below as not a netns.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ENOENT || err == ENOTDIR) {
      return Error(Code::kInvalidEnv, what + ": " + path + " does not exist", {}, err);
    }
    return Error(Code::kInvalidEnv, what + ": cannot open " + path + ": " + ErrnoText(err), {}, err);
  }
  const std::string not_netns =
      what + ": " + path +
      " is not a network namespace (pass a /var/run/netns/NAME bind mount or /proc/PID/ns/net)";
  // A netns handle lives on nsfs; a bind-mount target whose mount is gone is
  // a plain file on tmpfs and would otherwise look fine until setns().
  struct statfs fs {};
  if (::fstatfs(fd.get(), &fs) != 0) {
    const int err = errno;
    return Error(Code::kInvalidEnv, not_netns, "fstatfs: " + ErrnoText(err), err);
  }
  if (fs.f_type != static_cast<decltype(fs.f_type)>(NSFS_MAGIC)) {
    return Error(Code::kInvalidEnv, not_netns);
  }
  // nsfs also holds mount, pid, user, ... namespaces.
  const int type = ::ioctl(fd.get(), NS_GET_NSTYPE);
  if (type != CLONE_NEWNET) {
    const int err = type < 0 ? errno : 0;
    return Error(Code::kInvalidEnv, not_netns,
                 type < 0 ? "NS_GET_NSTYPE: " + ErrnoText(err) : "another kind of namespace", err);
  }
  return Netns(std::move(fd), path);
}

base::Result<Netns> Netns::OpenForeign(const std::string& path, const std::string& what, const Netns& node) {
  ASSIGN_OR_RETURN(Netns ns, Open(path, what));
  ASSIGN_OR_RETURN(bool same, ns.SameAs(node));
  // Compared by identity, not by path: a bind mount of the node's netns or
  // /proc/<pid>/ns/net of any node process names it as well as /proc/1 does.
  if (same)
    return Error(Code::kInvalidEnv,
                 what + ": " + path +
                     " is the node's own network namespace (the one erdma-cni runs in), not a pod's; "
                     "pass the pod sandbox's netns (/var/run/netns/NAME or /proc/PID/ns/net of the pod)");
  return ns;
}

base::Result<Netns> Netns::Dup() const {
  UniqueFd fd(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return base::SysError("duplicating the fd of " + path_, errno);
  return Netns(std::move(fd), path_, current_);
}

base::Result<bool> Netns::SameAs(const Netns& other) const {
  struct stat a {
  }, b{};
  if (::fstat(fd(), &a) != 0 || ::fstat(other.fd(), &b) != 0)
    return base::SysError("fstat of a network namespace", errno);
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

base::Result<NetnsSwitch> NetnsSwitch::Enter(const Netns& target) {
  // Already there (no switch since Current() opened it): nothing to do.
  if (target.current_ && t_switched == 0) return NetnsSwitch(UniqueFd(), -1);
  UniqueFd owned;
  int home = t_switched == 0 ? t_home : -1;
  if (home < 0) {
    owned = UniqueFd(::open(kThreadNetns, O_RDONLY | O_CLOEXEC));
    if (!owned.valid()) return base::SysError(std::string("opening ") + kThreadNetns, errno);
    home = owned.get();
  }
  if (::setns(target.fd(), CLONE_NEWNET) != 0) {
    const int err = errno;
    return Error(Code::kInvalidEnv,
                 "entering network namespace " + target.path() + ": " + ErrnoText(err) +
                     (err == EPERM ? " (needs CAP_SYS_ADMIN)" : ""),
                 {}, err);
  }
  ++t_switched;
  return NetnsSwitch(std::move(owned), home);
}

NetnsSwitch::NetnsSwitch(NetnsSwitch&& o) noexcept
    : owned_(std::move(o.owned_)), home_(std::exchange(o.home_, -1)) {}

NetnsSwitch::~NetnsSwitch() {
  if (home_ < 0) return;
  if (::setns(home_, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "erdma-cni: cannot return to the original network namespace: %s\n",
                 std::strerror(errno));
    std::abort();
  }
  --t_switched;
}

NetnsHome::NetnsHome(const Netns& home) {
  if (!home.current_ || t_switched != 0 || t_home >= 0) return;
  t_home = home.fd();
  set_ = true;
}

NetnsHome::~NetnsHome() {
  if (set_) t_home = -1;
}

}  // namespace netlink
