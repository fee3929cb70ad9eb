// Between libnl's route objects and erdma-cni's plain values (rtnl_kernel.h), and
// the text that names a request in an error message.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "netlink/ip.h"
#include "netlink/libnl_ptr.h"
#include "netlink/rtnl_kernel.h"

namespace netlink::rtnl {

LinkInfo ToLinkInfo(rtnl_link* link);
/// nullopt for families other than IPv4/IPv6.
std::optional<AddrInfo> ToAddrInfo(rtnl_addr* addr);
/// nullopt for families other than IPv4/IPv6. A multipath route carries all its legs in `nexthops`, and in
/// `oif`/`gateway` the leg through `through` when it has one, else its first.
std::optional<RouteInfo> ToRouteInfo(rtnl_route* route, int through = 0);
std::optional<RuleInfo> ToRuleInfo(rtnl_rule* rule);

/// Request templates. For deletes only the fields the kernel should match on are set (see the .cpp).
base::Result<nl::RtAddrPtr> MakeAddr(const AddrInfo& info, bool for_delete);
base::Result<nl::RoutePtr> MakeRoute(const RouteInfo& info, bool for_delete);
base::Result<nl::RulePtr> MakeRule(const RuleInfo& info);

/// "10.0.0.2/24 dev 5"
std::string Describe(const AddrInfo& a);
/// "10.0.0.0/24 via 10.0.0.1 dev 5 table 200 metric 100"; a multipath route
/// lists its legs: "10.0.0.0/24 nexthop via 10.0.0.1 dev 5 weight 1 nexthop ..."
std::string Describe(const RouteInfo& r);
/// "inet priority 200 from 10.0.0.5/32 table 200"
std::string Describe(const RuleInfo& r);

}  // namespace netlink::rtnl
