// The pod's IP configuration: IPAM lease, addresses, routes, rules; the JSON of the values they journal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cni/core/json_fields.h"
#include "cni/core/step_env.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

struct StepIpam {  ///< IPAM ADD ran; inverse: IPAM DEL with the same config
  static constexpr const char* kOp = "ipam";
  std::string type;
  nlohmann::json config;  ///< {cniVersion, name, ipam, ...}: what IPAM needs, not prevResult
};

struct StepAddr {  ///< address added in the pod
  static constexpr const char* kOp = "addr";
  static constexpr bool kOnLink = true;
  netlink::AddrInfo addr;
};

struct StepRoute {  ///< route added in the pod
  static constexpr const char* kOp = "route";
  static constexpr bool kOnLink = true;
  netlink::RouteInfo route;
};

struct StepRule {  ///< rule added in the pod
  static constexpr const char* kOp = "rule";
  netlink::RuleInfo rule;
};

CNI_STEP(StepIpam)
CNI_STEP(StepAddr)
CNI_STEP(StepRoute)
CNI_STEP(StepRule)

void Fields(JsonFields& f, netlink::AddrInfo& a);
void Fields(JsonFields& f, netlink::RouteInfo& r);
void Fields(JsonFields& f, netlink::RuleInfo& r);

/// A pod-side address or route planned with link index 0 gets `pod_index` once the link is in the pod.
void BindPodIndex(StepAddr& s, int pod_index);
void BindPodIndex(StepRoute& s, int pod_index);

}  // namespace cni
