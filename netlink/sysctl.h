// Per-netns sysctls (/proc/sys/net/...). /proc/sys/net shows the sysctls of the netns of the thread that
// opens the file, so each file is opened inside the target netns (NetnsSwitch, for open(2) only) and read or
// written through the fd, which stays bound to that netns.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/error.h"
#include "netlink/netns.h"

namespace netlink {

class Sysctl {
 public:
  virtual ~Sysctl() = default;
  /// The value without its trailing newline; nullopt when the kernel has no such sysctl in this netns.
  virtual base::Result<std::optional<std::string>> Read(const std::string& name) = 0;
  /// ENOENT (sys_errno) when the kernel has no such sysctl.
  virtual base::Status Write(const std::string& name, const std::string& value) = 0;
};

/// A sysctl name erdma-cni may write: "net." then components of
/// [A-Za-z0-9_-] separated by '.'; nothing that could leave /proc/sys/net.
bool IsSafeSysctlName(const std::string& name);

/// Names must pass IsSafeSysctlName; anything else is refused (kInvalidConfig) before touching /proc.
base::Result<std::unique_ptr<Sysctl>> OpenSysctl(const Netns& ns);

}  // namespace netlink
