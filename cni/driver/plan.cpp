#include "cni/driver/plan.h"

#include <sys/socket.h>

#include <set>

namespace cni {

using netlink::AddrInfo;
using netlink::RouteInfo;
using netlink::RuleInfo;

base::Result<uint32_t> ChooseTable(const conf::Routing& routing, const std::vector<RuleInfo>& pod_rules,
                                   const std::vector<RouteInfo>& pod_routes) {
  std::set<uint32_t> used;
  for (const auto& r : pod_rules) used.insert(r.table);
  for (const auto& r : pod_routes) used.insert(r.table);
  if (routing.table) {
    // A shared table would mix their routes with ours, and DEL would leave them half-removed.
    if (used.count(*routing.table))
      return base::Error(base::Code::kInvalidConfig,
                         "routing.table: table " + std::to_string(*routing.table) +
                             " is already used in the pod; use \"auto\" or another table");
    return *routing.table;
  }
  uint32_t t = 200;
  while (used.count(t) || t == netlink::kTableMain || t == netlink::kTableLocal ||
         t == netlink::kTableDefault)
    ++t;
  return t;
}

std::vector<RouteInfo> RestorableRoutes(const std::vector<RouteInfo>& via_device) {
  std::vector<RouteInfo> out = via_device;
  std::erase_if(out, [](const RouteInfo& r) {
    return r.protocol == netlink::kProtoKernel || r.table == netlink::kTableLocal ||
           (r.family() == AF_INET6 && (r.dst.addr.IsLinkLocal() || r.dst.addr.bytes[0] == 0xff));
  });
  return out;
}

std::vector<AddrInfo> RestorableAddrs(const std::vector<AddrInfo>& addrs) {
  std::vector<AddrInfo> out = addrs;
  std::erase_if(
      out, [](const AddrInfo& a) { return a.local.addr.family == AF_INET6 && a.local.addr.IsLinkLocal(); });
  return out;
}

std::vector<Step> PlanPodConfig(const conf::Config& cfg, int pod_index, uint32_t table,
                                const std::vector<ipam::IpConfig>& ips) {
  std::vector<Step> steps;
  if (cfg.mtu) steps.push_back(StepMtu{*cfg.mtu});
  for (const auto& ip : ips) {
    AddrInfo a;
    a.ifindex = pod_index;
    a.local = ip.address;
    // Our subnet route at routeMetric, not the kernel's, so it never outranks the primary interface's.
    a.flags = netlink::kAddrFlagNoPrefixRoute;
    if (ip.address.addr.family == AF_INET6) a.flags |= netlink::kAddrFlagNoDad;
    steps.push_back(StepAddr{a});
  }
  steps.push_back(StepUp{});

  std::set<std::string> seen_subnets;
  std::set<int> default_done;
  for (const auto& ip : ips) {
    const netlink::IpPrefix subnet = ip.address.Network();
    const bool host_only = ip.address.len == ip.address.addr.BitLength();
    if (!host_only && seen_subnets.insert(subnet.ToString()).second) {
      RouteInfo main_route;
      main_route.dst = subnet;
      main_route.oif = pod_index;
      main_route.table = netlink::kTableMain;
      main_route.metric = cfg.routing.route_metric;
      main_route.scope = netlink::kScopeLink;
      main_route.prefsrc = ip.address.addr;
      steps.push_back(StepRoute{main_route});

      RouteInfo table_route = main_route;
      table_route.table = table;
      table_route.metric = 0;
      steps.push_back(StepRoute{table_route});
    }
    const int fam = ip.address.addr.family;
    if (cfg.routing.default_route && ip.gateway && default_done.insert(fam).second) {
      RouteInfo def;
      def.dst = netlink::IpPrefix{netlink::IpAddress{fam, {}}, 0};
      def.gateway = ip.gateway;
      def.oif = pod_index;
      def.table = table;
      def.scope = netlink::kScopeUniverse;
      steps.push_back(StepRoute{def});
    }
  }
  for (const auto& ip : ips) {
    RuleInfo rule;
    rule.family = ip.address.addr.family;
    rule.priority = cfg.routing.rule_priority;
    rule.src = ip.address.Host();
    rule.table = table;
    steps.push_back(StepRule{rule});
  }
  return steps;
}

}  // namespace cni
