// `addresses: inherit`: the ENI's own addresses, and the gateway from the node's routes through it.
#pragma once

#include <vector>

#include "ipam/ipam.h"
#include "netlink/rtnl_kernel.h"

namespace ipam {

/// The device's global addresses (link-local and host-scope ones are left to the kernel), each with the
/// gateway the node uses through the device for that family: a default route via the device (main table
/// first, then any table, lowest metric), else any route via a gateway inside the address's subnet. Pure.
std::vector<IpConfig> Inherit(const std::vector<netlink::AddrInfo>& addrs,
                              const std::vector<netlink::RouteInfo>& routes_via_device);

}  // namespace ipam
