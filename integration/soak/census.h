// What a soak run counts before and after: everything an ADD/DEL cycle could
// leave behind. Read with tools independent of the plugin (`ip -j`, /proc,
// the file system), so a bug in the plugin's own netlink code cannot hide a
// leak from the count.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace soak {

/// One census: each field is a sorted list of canonical lines, so two
/// censuses compare line by line.
struct Census {
  std::vector<std::string> fds;  ///< this process's /proc/self/fd: "N -> target"
  std::map<std::string, std::vector<std::string>>
      netns;                        ///< per netns: links, addresses, routes of every table, rules
  std::vector<std::string> files;   ///< every file and directory under the watched directories
  std::vector<std::string> mounts;  ///< mounts of this process's mount namespace that its parent's lacks
};

/// Where to look.
struct Watch {
  std::vector<std::string> netns;  ///< names under /run/netns
  std::vector<std::string> dirs;   ///< dataDir, the IPAM dir
  int parent_pid = 0;              ///< a process in the original mount namespace
};

Census Take(const Watch& w);

/// Lines only in `before` ("- what: line") and only in `after` ("+ what: line").
std::vector<std::string> Diff(const Census& before, const Census& after);

/// Takes censuses until one matches `before` or `settle_ms` passes (the
/// kernel finishes some things after the plugin exits: a returned veth's
/// carrier, IPv6 link-local addresses and their DAD); the last diff.
std::vector<std::string> SettledDiff(const Census& before, const Watch& w, int settle_ms, Census* last);

/// A one-line count: "7 fds, node 61 lines, pod 12 lines, 9 files, 1 private mount".
std::string Summary(const Census& c);

}  // namespace soak
