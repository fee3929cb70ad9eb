#include "ipam/inherit.h"

#include <optional>
#include <tuple>

namespace ipam {

using netlink::IpAddress;
using netlink::RouteInfo;

namespace {

std::optional<IpAddress> GatewayFor(const netlink::IpPrefix& addr, const std::vector<RouteInfo>& routes) {
  const RouteInfo* best = nullptr;
  auto rank = [](const RouteInfo& r) {
    // Lower is better: default routes in main, default routes elsewhere, others.
    int kind = r.dst.IsDefault() ? (r.table == netlink::kTableMain ? 0 : 1) : 2;
    return std::make_tuple(kind, r.metric);
  };
  for (const auto& r : routes) {
    if (!r.gateway || r.family() != addr.addr.family) continue;
    if (!r.dst.IsDefault() && !addr.Contains(*r.gateway)) continue;
    if (!best || rank(r) < rank(*best)) best = &r;
  }
  return best ? best->gateway : std::nullopt;
}

}  // namespace

std::vector<IpConfig> Inherit(const std::vector<netlink::AddrInfo>& addrs,
                              const std::vector<RouteInfo>& routes_via_device) {
  std::vector<IpConfig> out;
  for (const auto& a : addrs) {
    if (a.scope != netlink::kScopeUniverse || a.local.addr.IsLinkLocal()) continue;
    out.push_back(IpConfig{a.local, GatewayFor(a.local, routes_via_device)});
  }
  return out;
}

}  // namespace ipam
