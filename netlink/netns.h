// Network namespace handles.
#pragma once

#include <string>

#include "base/error.h"
#include "base/fd.h"

namespace netlink {

/// An open network namespace. Holding the fd keeps the namespace alive.
class Netns {
 public:
  /// The namespace the calling thread is in (/proc/thread-self/ns/net). Opened outside any NetnsSwitch,
  /// entering it (from the same thread, again outside any switch) is a no-op: sockets and files opened "in"
  /// it need no setns. erdma-cni switches namespaces from one thread only.
  static base::Result<Netns> Current();
  /// Opens a netns file (a /run/netns bind mount or /proc/PID/ns/net). Fails with kInvalidEnv (naming `what`,
  /// e.g. "CNI_NETNS") when the path does not exist, is not on nsfs or is not a network namespace.
  static base::Result<Netns> Open(const std::string& path, const std::string& what);
  /// Open, and refused (kInvalidEnv, naming `what`) when the namespace is the one this process runs in: a
  /// pod's netns, never the node's, whatever path names it (/proc/1/ns/net, /proc/self/ns/net, a bind mount
  /// of either). `node` is the process's own namespace (a Current() handle).
  static base::Result<Netns> OpenForeign(const std::string& path, const std::string& what, const Netns& node);

  /// A second handle of the same namespace (a dup of the fd: the namespace
  /// it names now, whatever its path names later).
  base::Result<Netns> Dup() const;

  /// Whether both handles name one namespace (nsfs device and inode: the
  /// namespace's identity, whatever path opened it).
  base::Result<bool> SameAs(const Netns& other) const;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  /// The fd, for a holder that outlives this handle.
  base::UniqueFd TakeFd() && { return std::move(fd_); }

 private:
  friend class NetnsSwitch;
  friend class NetnsHome;
  Netns(base::UniqueFd fd, std::string path, bool current = false)
      : fd_(std::move(fd)), path_(std::move(path)), current_(current) {}
  base::UniqueFd fd_;
  std::string path_;
  bool current_ = false;  // the thread's own namespace, opened outside any switch
};

/// Switches the calling thread into a netns for its lifetime and back on destruction; aborts the process if
/// it cannot switch back (continuing in the wrong namespace would configure the wrong node).
class NetnsSwitch {
 public:
  static base::Result<NetnsSwitch> Enter(const Netns& target);
  NetnsSwitch(NetnsSwitch&& o) noexcept;
  NetnsSwitch(const NetnsSwitch&) = delete;
  NetnsSwitch& operator=(const NetnsSwitch&) = delete;
  NetnsSwitch& operator=(NetnsSwitch&&) = delete;
  ~NetnsSwitch();

 private:
  NetnsSwitch(base::UniqueFd owned, int home) : owned_(std::move(owned)), home_(home) {}
  base::UniqueFd owned_;  // the way back, opened for this switch (or none)
  int home_ = -1;         // the fd to return to; -1: no switch was needed (or moved from)
};

/// While it lives, a switch made from the thread's own namespace returns to `home` instead of opening
/// /proc/thread-self/ns/net for the way back. `home` must be a Current() handle opened outside any switch
/// (otherwise this does nothing) and must outlive this; one per thread. Like Current(), it relies on nothing
/// but NetnsSwitch moving the thread between namespaces.
class NetnsHome {
 public:
  explicit NetnsHome(const Netns& home);
  NetnsHome(const NetnsHome&) = delete;
  NetnsHome& operator=(const NetnsHome&) = delete;
  ~NetnsHome();

 private:
  bool set_ = false;
};

}  // namespace netlink
