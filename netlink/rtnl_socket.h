// netlink::Kernel over rtnetlink with libnl-3/libnl-route-3.
#pragma once

#include <memory>

#include "base/error.h"
#include "netlink/netns.h"
#include "netlink/rtnl_kernel.h"

namespace netlink {

/// Opens an rtnetlink socket inside `ns` (netlink::Socket) and returns a Kernel
/// bound to it, which keeps its own dup of ns's fd for NetnsFd().
base::Result<std::unique_ptr<Kernel>> OpenRtnl(const Netns& ns);
/// The same, keeping `ns`'s own fd instead of a dup.
base::Result<std::unique_ptr<Kernel>> OpenRtnl(Netns&& ns);

}  // namespace netlink
