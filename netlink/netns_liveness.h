// Whether a network namespace still exists, told from outside it: the kernel keeps a netns while a task is in
// it, a descriptor refers to it or nsfs mounts it somewhere. Used to tell an attachment whose pod is provably
// gone (its runtime lost the DEL) from one whose pod merely is not running a task.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"

namespace netlink {

/// A namespace's identity: the nsfs device and inode of any handle of it (what fstat of an open
/// /run/netns/NAME or /proc/PID/ns/net gives). The inode number is handed to the next new namespace once this
/// one is freed; the cookie (SO_NETNS_COOKIE, Linux 5.14) is never reused.
struct NetnsId {
  uint64_t dev = 0;
  uint64_t ino = 0;
  uint64_t cookie = 0;  ///< 0: unknown (an older kernel)
  bool operator==(const NetnsId&) const = default;
};

/// The identity of the namespace the descriptor `fd` refers to; `cookie` when the caller knows it (a socket
/// of its own in that namespace: SocketNetnsCookie), else asked of a socket made in it.
base::Result<NetnsId> NetnsIdOf(int fd, uint64_t cookie = 0);

/// SO_NETNS_COOKIE of socket `fd`: the cookie of the namespace it was made
/// in; 0 when the kernel cannot tell (before Linux 5.14).
uint64_t SocketNetnsCookie(int fd);

/// The cookie of the network namespace a handle (a netns file, a /proc/<pid>/ns/net or /proc/<pid>/fd/<n>
/// link) leads to: a socket made inside it (NetnsSwitch) says. nullopt when it cannot be told.
std::optional<uint64_t> NetnsCookieAt(const std::string& handle);

/// Whether the netns recorded as `path` (and `id`, when known) may still exist. With `id`: while `path`
/// resolves to it, a thread of a task under `proc_root` is in it, a task's descriptor refers to it or is a
/// socket made in it (only when `proc_root` is "/proc"), or a mount namespace mounts it; a handle with its
/// device and inode but another cookie proves it gone. Without `id` (a state of an older erdma-cni): while
/// `path` opens as a netns. True when unsure; a reference no task holds (a socket in flight) is not seen.
/// `kept_by` (when given) receives what keeps it ("task 1234").
bool NetnsMayExist(const std::optional<NetnsId>& id, const std::string& path,
                   const std::string& proc_root = "/proc", std::string* kept_by = nullptr);

}  // namespace netlink
