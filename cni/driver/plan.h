// The plan of an ADD, and the pure functions from the config and what the kernel shows to its steps.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/driver/smcr.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "ipam/ipam.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// What ADD does, decided before anything changes: the state it journals into and its steps, in order.
struct Plan {
  AttachmentState state;  ///< names, table, and what DEL restores of the device
  /// First, on the node: the RDMA netns mode switch, a VF's settings through its PF.
  std::vector<Step> node_steps;
  /// Of node_steps, those the claim keeps too, for a DEL without a readable state: a VF's settings.
  std::vector<Step> claim_steps;
  conf::AddressMode addresses = conf::AddressMode::kNone;
  /// The steps that bring the link in and configure it with the addresses; empty when nothing enters the pod.
  std::function<std::vector<Step>(const std::vector<ipam::IpConfig>&)> link_steps;
  /// Recorded in the state with the link steps.
  std::string rdma_device, rdma_mode;
  std::optional<SmcrTarget> smcr;  ///< the pipeline reads and plans its steps (ReadSmcr, PlanSmcr)
  /// The result: prevResult passed through (mode none), or with our interface added, its MAC from the pod
  /// link or `result_mac` when no link enters the pod.
  bool pass_through = false;
  std::string result_mac;
  /// Nothing to change and nothing to remember: the result is all.
  bool result_only = false;
  std::string log_line;  ///< the log line of a successful ADD
};

/// The configured table, or the first >= 200 no pod rule or route uses; kInvalidConfig if a configured one
/// is.
base::Result<uint32_t> ChooseTable(const conf::Routing& routing,
                                   const std::vector<netlink::RuleInfo>& pod_rules,
                                   const std::vector<netlink::RouteInfo>& pod_routes);

/// Routes a device keeps on the node that DEL must put back: everything through it except what the kernel
/// makes by itself (prefix routes of its addresses, the local table, IPv6 multicast/link-local).
std::vector<netlink::RouteInfo> RestorableRoutes(const std::vector<netlink::RouteInfo>& via_device);

/// Addresses DEL must put back: all except IPv6 link-local (the kernel makes those).
std::vector<netlink::AddrInfo> RestorableAddrs(const std::vector<netlink::AddrInfo>& addrs);

/// The steps that configure the pod-side interface `pod_index` (0: Journal::Run fills it in): MTU, addresses
/// (no kernel prefix route; no DAD for IPv6), up, the subnet route in main at routeMetric, the policy table's
/// subnet and default routes, and one rule per address at rulePriority.
std::vector<Step> PlanPodConfig(const conf::Config& cfg, int pod_index, uint32_t table,
                                const std::vector<ipam::IpConfig>& ips);

}  // namespace cni
