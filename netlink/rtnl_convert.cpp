#include "netlink/rtnl_convert.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/escape.h"

namespace netlink::rtnl {
namespace {

// IFA_F_* flags a caller can ask for in RTM_NEWADDR: ListAddrs reports only these (not the kernel's state
// bits), so what AddAddr added lists back as equal.
constexpr uint32_t kSettableAddrFlags = 0x02 /*NODAD*/ | 0x04 /*OPTIMISTIC*/ | 0x10 /*HOMEADDRESS*/ |
                                        0x100 /*MANAGETEMPADDR*/ | 0x200 /*NOPREFIXROUTE*/ |
                                        0x400 /*MCAUTOJOIN*/;

base::Error Invalid(const std::string& why) {
  return base::Error(base::Code::kKernel, std::strerror(EINVAL), why, EINVAL);
}

base::Error NoMemory() {
  return base::Error(base::Code::kKernel, std::strerror(ENOMEM), "libnl: out of memory", ENOMEM);
}

bool IsIp(int family) { return family == AF_INET || family == AF_INET6; }

/// The prefix in `a` for a route or rule of `family`. libnl gives a default
/// route a zero-length address, which becomes the all-zero address.
IpPrefix PrefixOf(const nl_addr* a, int family) {
  IpPrefix p;
  p.addr.family = family;
  if (!a) return p;
  const size_t len = std::min<size_t>(nl_addr_get_len(a), p.addr.ByteLength());
  std::memcpy(p.addr.bytes.data(), nl_addr_get_binary_addr(a), len);
  p.len = static_cast<int>(nl_addr_get_prefixlen(a));
  return p;
}

std::string FamilyName(int family) { return family == AF_INET6 ? "inet6" : "inet"; }

// "aa:bb:cc:dd:ee:ff" in lower case; "" for a null or empty address.
std::string FormatHwAddr(const nl_addr* a) {
  if (!a) return "";
  return base::HexWithColons(static_cast<const uint8_t*>(nl_addr_get_binary_addr(a)), nl_addr_get_len(a));
}

// An nl_addr holding `a` with prefix length `len`; null when out of memory.
nl::AddrPtr ToNlAddr(const IpAddress& a, int len) {
  nl::AddrPtr out(nl_addr_build(a.family, a.bytes.data(), a.ByteLength()));
  if (out) nl_addr_set_prefixlen(out.get(), len);
  return out;
}

// The IPv4/IPv6 address in `a`; nullopt for null or another family.
std::optional<IpAddress> FromNlAddr(const nl_addr* a) {
  if (!a) return std::nullopt;
  IpAddress out;
  out.family = nl_addr_get_family(a);
  if (!IsIp(out.family) || nl_addr_get_len(a) != out.ByteLength()) return std::nullopt;
  std::memcpy(out.bytes.data(), nl_addr_get_binary_addr(a), out.ByteLength());
  return out;
}

}  // namespace

LinkInfo ToLinkInfo(rtnl_link* link) {
  LinkInfo info;
  info.index = rtnl_link_get_ifindex(link);
  if (const char* name = rtnl_link_get_name(link)) info.name = name;
  info.mac = FormatHwAddr(rtnl_link_get_addr(link));
  info.mtu = rtnl_link_get_mtu(link);
  info.up = (rtnl_link_get_flags(link) & IFF_UP) != 0;
  if (const char* kind = rtnl_link_get_type(link)) info.kind = kind;
  return info;
}

std::optional<AddrInfo> ToAddrInfo(rtnl_addr* addr) {
  const int family = rtnl_addr_get_family(addr);
  if (!IsIp(family)) return std::nullopt;
  AddrInfo info;
  info.ifindex = rtnl_addr_get_ifindex(addr);
  // IPv4 point-to-point addresses carry the peer in IFA_ADDRESS; IFA_LOCAL
  // is ours. libnl maps IPv6's lone IFA_ADDRESS to local as well.
  auto local = FromNlAddr(rtnl_addr_get_local(addr));
  if (!local) return std::nullopt;
  info.local = IpPrefix{*local, static_cast<int>(rtnl_addr_get_prefixlen(addr))};
  info.scope = static_cast<uint8_t>(rtnl_addr_get_scope(addr));
  info.flags = rtnl_addr_get_flags(addr) & kSettableAddrFlags;
  if (family == AF_INET) info.broadcast = FromNlAddr(rtnl_addr_get_broadcast(addr));
  return info;
}

std::optional<RouteInfo> ToRouteInfo(rtnl_route* route, int through) {
  const int family = rtnl_route_get_family(route);
  if (!IsIp(family)) return std::nullopt;
  RouteInfo info;
  info.dst = PrefixOf(rtnl_route_get_dst(route), family);
  const int count = rtnl_route_get_nnexthops(route);
  for (int i = 0; i < count; ++i) {
    rtnl_nexthop* nh = rtnl_route_nexthop_n(route, i);
    // libnl keeps the kernel's rtnh_hops, which is the weight minus one.
    info.nexthops.push_back(Nexthop{FromNlAddr(rtnl_route_nh_get_gateway(nh)), rtnl_route_nh_get_ifindex(nh),
                                    rtnl_route_nh_get_weight(nh) + 1u});
  }
  if (!info.nexthops.empty()) {
    const Nexthop* leg = &info.nexthops.front();
    for (const Nexthop& n : info.nexthops)
      if (through > 0 && n.oif == through) leg = &n;
    info.oif = leg->oif;
    info.gateway = leg->gateway;
  }
  // One nexthop is a single-path route: RTA_OIF and RTA_GATEWAY say it all.
  if (info.nexthops.size() < 2) info.nexthops.clear();
  info.prefsrc = FromNlAddr(rtnl_route_get_pref_src(route));
  info.table = rtnl_route_get_table(route);
  info.metric = rtnl_route_get_priority(route);
  info.scope = rtnl_route_get_scope(route);
  info.protocol = rtnl_route_get_protocol(route);
  info.type = rtnl_route_get_type(route);
  return info;
}

std::optional<RuleInfo> ToRuleInfo(rtnl_rule* rule) {
  const int family = rtnl_rule_get_family(rule);
  if (!IsIp(family)) return std::nullopt;
  RuleInfo info;
  info.family = family;
  info.priority = rtnl_rule_get_prio(rule);
  if (nl_addr* src = rtnl_rule_get_src(rule)) info.src = PrefixOf(src, family);
  info.table = rtnl_rule_get_table(rule);
  return info;
}

base::Result<nl::RtAddrPtr> MakeAddr(const AddrInfo& info, bool for_delete) {
  const int family = info.local.addr.family;
  if (!IsIp(family)) return Invalid("the address is neither IPv4 nor IPv6");
  nl::RtAddrPtr addr(rtnl_addr_alloc());
  nl::AddrPtr local = ToNlAddr(info.local.addr, info.local.len);
  if (!addr || !local) return NoMemory();
  rtnl_addr_set_ifindex(addr.get(), info.ifindex);
  rtnl_addr_set_family(addr.get(), family);
  if (rtnl_addr_set_local(addr.get(), local.get()) < 0) return Invalid("bad local address");
  // The kernel finds the address to delete by ifindex, local and prefix
  // length; scope, flags and broadcast only matter when adding.
  if (for_delete) return addr;
  rtnl_addr_set_scope(addr.get(), info.scope);
  // Flags above 0xff (NOPREFIXROUTE) go in IFA_FLAGS; libnl adds it when needed.
  if (info.flags) rtnl_addr_set_flags(addr.get(), info.flags);
  if (info.broadcast) {
    if (family != AF_INET || info.broadcast->family != AF_INET)
      return Invalid("a broadcast address is IPv4 only");
    nl::AddrPtr brd = ToNlAddr(*info.broadcast, 32);
    if (!brd) return NoMemory();
    if (rtnl_addr_set_broadcast(addr.get(), brd.get()) < 0) return Invalid("bad broadcast address");
  }
  return addr;
}

base::Result<nl::RoutePtr> MakeRoute(const RouteInfo& info, bool for_delete) {
  const int family = info.family();
  if (!IsIp(family)) return Invalid("the destination is neither IPv4 nor IPv6");
  nl::RoutePtr route(rtnl_route_alloc());
  nl::AddrPtr dst = ToNlAddr(info.dst.addr, info.dst.len);
  if (!route || !dst) return NoMemory();
  rtnl_route_set_family(route.get(), family);
  if (rtnl_route_set_dst(route.get(), dst.get()) < 0) return Invalid("bad destination");
  rtnl_route_set_table(route.get(), info.table);
  rtnl_route_set_priority(route.get(), info.metric);
  // libnl guesses a scope when none is set; RT_SCOPE_NOWHERE is how a delete says "any scope" to the kernel
  // (what `ip route del` sends). Protocol and type 0 likewise match any; metric 0 matches the lowest.
  rtnl_route_set_scope(route.get(), for_delete ? uint8_t{RT_SCOPE_NOWHERE} : info.scope);
  rtnl_route_set_protocol(route.get(), info.protocol);
  if (rtnl_route_set_type(route.get(), info.type) < 0) return Invalid("bad route type");
  if (info.prefsrc) {
    nl::AddrPtr src = ToNlAddr(*info.prefsrc, info.prefsrc->BitLength());
    if (!src) return NoMemory();
    if (rtnl_route_set_pref_src(route.get(), src.get()) < 0) return Invalid("bad preferred source");
  }
  // A multipath route's legs travel in RTA_MULTIPATH (libnl uses it for two
  // or more nexthops); a single path in RTA_OIF and RTA_GATEWAY.
  std::vector<Nexthop> legs = info.nexthops;
  if (legs.size() < 2) legs = {Nexthop{info.gateway, info.oif, 1}};
  for (const Nexthop& leg : legs) {
    if (leg.oif <= 0 && !leg.gateway) continue;
    if (leg.weight < 1 || leg.weight > 256) return Invalid("a nexthop's weight is outside 1..256");
    nl::NexthopPtr nh(rtnl_route_nh_alloc());
    if (!nh) return NoMemory();
    if (leg.oif > 0) rtnl_route_nh_set_ifindex(nh.get(), leg.oif);
    rtnl_route_nh_set_weight(nh.get(), static_cast<uint8_t>(leg.weight - 1));
    if (leg.gateway) {
      nl::AddrPtr gw = ToNlAddr(*leg.gateway, leg.gateway->BitLength());
      if (!gw) return NoMemory();
      rtnl_route_nh_set_gateway(nh.get(), gw.get());
    }
    rtnl_route_add_nexthop(route.get(), nh.release());  // the route owns it now
  }
  return route;
}

base::Result<nl::RulePtr> MakeRule(const RuleInfo& info) {
  if (!IsIp(info.family)) return Invalid("the rule's family is neither IPv4 nor IPv6");
  nl::RulePtr rule(rtnl_rule_alloc());
  if (!rule) return NoMemory();
  rtnl_rule_set_family(rule.get(), info.family);
  rtnl_rule_set_prio(rule.get(), info.priority);
  if (info.src) {
    if (info.src->addr.family != info.family) return Invalid("the source is of another family");
    nl::AddrPtr src = ToNlAddr(info.src->addr, info.src->len);
    if (!src) return NoMemory();
    if (rtnl_rule_set_src(rule.get(), src.get()) < 0) return Invalid("bad source prefix");
  }
  rtnl_rule_set_table(rule.get(), info.table);
  rtnl_rule_set_action(rule.get(), FR_ACT_TO_TBL);
  return rule;
}

std::string Describe(const AddrInfo& a) { return a.local.ToString() + " dev " + std::to_string(a.ifindex); }

std::string Describe(const RouteInfo& r) {
  std::string s = r.dst.ToString();
  if (r.nexthops.size() > 1) {
    for (const Nexthop& n : r.nexthops) {
      s += " nexthop";
      if (n.gateway) s += " via " + n.gateway->ToString();
      if (n.oif > 0) s += " dev " + std::to_string(n.oif);
      s += " weight " + std::to_string(n.weight);
    }
  } else {
    if (r.gateway) s += " via " + r.gateway->ToString();
    if (r.oif > 0) s += " dev " + std::to_string(r.oif);
  }
  s += " table " + std::to_string(r.table) + " metric " + std::to_string(r.metric);
  return s;
}

std::string Describe(const RuleInfo& r) {
  return FamilyName(r.family) + " priority " + std::to_string(r.priority) + " from " +
         (r.src ? r.src->ToString() : "all") + " table " + std::to_string(r.table);
}

}  // namespace netlink::rtnl
