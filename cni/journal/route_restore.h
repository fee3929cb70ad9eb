// Putting a device's node routes back when DEL brings it home, exactly as ADD recorded them: appended routes
// next to other devices' routes of the same destination and metric, and multipath routes with every leg.
#pragma once

#include <vector>

#include "base/error.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// Whether `have` (as the kernel lists it) is `want`, or for IPv6 holds it (a single path) as a leg.
bool RouteHolds(const netlink::RouteInfo& have, const netlink::RouteInfo& want);

/// Puts every route back through link `index`. One the kernel refuses as existing is restored only if it
/// lists it; otherwise it is appended next to what holds its destination and metric. One whose gateway is
/// not reachable yet is retried while others make progress (the dump order is not the dependency order).
base::Status RestoreRoutes(const std::vector<netlink::RouteInfo>& routes, int index, netlink::Kernel& host);

}  // namespace cni
