// Planning: pure functions from (config, what the kernel shows) to steps.
// No kernel access here; unit-tested on values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/state.h"
#include "conf/config.h"
#include "ipam/ipam.h"
#include "netlink/kernel.h"

namespace cni {

/// The first table >= 200 that no rule and no route in the pod uses, or the
/// configured one. kInvalidConfig when a configured table is already used.
base::Result<uint32_t> ChooseTable(const conf::Routing& routing,
                                   const std::vector<netlink::RuleInfo>& pod_rules,
                                   const std::vector<netlink::RouteInfo>& pod_routes);

/// Routes a device keeps on the node that DEL must put back: everything
/// through it except what the kernel makes by itself (prefix routes of its
/// addresses, the local table, IPv6 multicast/link-local).
std::vector<netlink::RouteInfo> RestorableRoutes(const std::vector<netlink::RouteInfo>& via_device);

/// Addresses DEL must put back: all except IPv6 link-local (the kernel makes those).
std::vector<netlink::AddrInfo> RestorableAddrs(const std::vector<netlink::AddrInfo>& addrs);

/// The steps after the move that configure the pod-side interface `pod_index`
/// (0 when planned before the link is in the pod: Journal::Run fills it in):
/// MTU, addresses (no kernel prefix route; no DAD for IPv6), up, the subnet
/// route in main at routeMetric, the policy table's subnet and default routes,
/// and one rule per address at rulePriority.
std::vector<Step> PlanPodConfig(const conf::Config& cfg, int pod_index, uint32_t table,
                                const std::vector<ipam::IpConfig>& ips);

}  // namespace cni
