// Putting a device's node routes back when DEL brings it home, exactly as ADD recorded them: appended routes
// next to other devices' routes of the same destination and metric, and multipath routes with every leg.
#pragma once

#include <vector>

#include "base/error.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// The kernel's units of restoring `recorded` (a route through the device when its index was `recorded.oif`),
/// with its legs through the device now at `index`. An IPv4 route is one unit: the kernel dropped it whole
/// when the device left. An IPv6 multipath route is one unit per leg through the device: each leg is a route
/// of its own, and the kernel dropped only those.
std::vector<netlink::RouteInfo> RestoreUnits(const netlink::RouteInfo& recorded, int index);

/// Whether `have` (as the kernel lists it) is `want`, or, for IPv6, holds
/// `want` (a single path) as one of its legs.
bool RouteHolds(const netlink::RouteInfo& have, const netlink::RouteInfo& want);

/// Puts every route back through link `index`. One the kernel refuses as existing is restored only if it
/// lists it; otherwise it is appended next to what holds its destination and metric. One whose gateway is
/// not reachable yet is retried while others make progress (the dump order is not the dependency order).
base::Status RestoreRoutes(const std::vector<netlink::RouteInfo>& routes, int index, netlink::Kernel& host);

}  // namespace cni
