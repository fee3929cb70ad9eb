// fake::FakeKernel: the netlink::Kernel verbs over a fake::World namespace,
// with the errno each one gets from Linux.
#include "test/fake/fake_kernel.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

namespace fake {

using base::Error;
using base::Result;
using base::Status;
using netlink::AddrInfo;
using netlink::LinkInfo;
using netlink::RouteInfo;
using netlink::RuleInfo;

namespace {

bool KnownFamily(int family) { return family == AF_INET || family == AF_INET6; }

// dev_valid_name: 1..15 bytes, not "." or "..", no '/', ':' or whitespace.
bool ValidIfName(std::string_view name) {
  if (name.empty() || name.size() >= 16 || name == "." || name == "..") return false;
  return std::none_of(name.begin(), name.end(), [](char c) {
    return c == '/' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  });
}

// Six hex bytes, not multicast, not all zero (is_valid_ether_addr).
bool ValidUnicastMac(std::string_view mac) {
  unsigned b[6];
  char tail = 0;
  const std::string text(mac);
  if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                  &tail) != 6)
    return false;
  return (b[0] & 1) == 0 && (b[0] | b[1] | b[2] | b[3] | b[4] | b[5]) != 0;
}

}  // namespace

class FakeKernel final : public netlink::Kernel {
 public:
  FakeKernel(World* world, int ns) : world_(world), ns_id_(ns) {}

  int NetnsFd() const override { return ns_id_; }

  Result<std::vector<LinkInfo>> ListLinks() override {
    std::vector<LinkInfo> out = ns().links;
    std::sort(out.begin(), out.end(), [](const LinkInfo& a, const LinkInfo& b) { return a.index < b.index; });
    return out;
  }

  Result<std::optional<LinkInfo>> FindLink(std::string_view name) override {
    if (const LinkInfo* l = World::FindLinkByName(ns(), name)) return std::optional(*l);
    return std::optional<LinkInfo>();
  }

  Result<std::optional<LinkInfo>> FindLinkByIndex(int index) override {
    if (const LinkInfo* l = World::FindLink(ns(), index)) return std::optional(*l);
    return std::optional<LinkInfo>();
  }

  using netlink::Kernel::MoveLink;
  Status MoveLink(const LinkInfo& link, const netlink::Kernel& target, std::string_view new_name) override;
  Status RenameLink(int index, std::string_view new_name) override;
  Status SetMtu(int index, uint32_t mtu) override;
  Status SetUp(int index, bool up) override;
  Status SetMac(int index, std::string_view mac) override;
  Status AddChildLink(const netlink::ChildLinkSpec& spec, const netlink::Kernel& target) override;
  Status DeleteLink(int index) override;

  // As a dump with AF_UNSPEC: IPv4 then IPv6, by link, in the order added.
  Result<std::vector<AddrInfo>> ListAddrs(int index) override {
    std::vector<AddrInfo> out;
    for (const AddrInfo& a : ns().addrs)
      if (index == 0 || a.ifindex == index) out.push_back(a);
    std::stable_sort(out.begin(), out.end(), [](const AddrInfo& a, const AddrInfo& b) {
      return std::tie(a.local.addr.family, a.ifindex) < std::tie(b.local.addr.family, b.ifindex);
    });
    return out;
  }
  Status AddAddr(const AddrInfo& addr) override;
  Status DelAddr(const AddrInfo& addr) override;

  Result<std::vector<RouteInfo>> ListRoutes(int oif) override {
    std::vector<RouteInfo> out;
    for (RouteInfo r : ns().routes) {
      // A multipath route is through every leg's device, and names that leg.
      for (const netlink::Nexthop& n : r.nexthops)
        if (oif != 0 && n.oif == oif) std::tie(r.oif, r.gateway) = std::tie(n.oif, n.gateway);
      if (oif == 0 || r.oif == oif) out.push_back(r);
    }
    return out;
  }
  Status AddRoute(const RouteInfo& route) override { return InsertRoute(route, false); }
  Status AppendRoute(const RouteInfo& route) override { return InsertRoute(route, true); }
  Status DelRoute(const RouteInfo& route) override;

  Result<std::vector<RuleInfo>> ListRules() override { return ns().rules; }
  Status AddRule(const RuleInfo& rule) override;
  Status DelRule(const RuleInfo& rule) override;

 private:
  World::Netns& ns() { return world_->Ns(ns_id_); }

  // Counts and logs a mutating call; returns the injected error when this is
  // the call World::FailCall picked.
  std::optional<Error> Begin(const std::string& what) { return world_->Begin(ns().name + " " + what, what); }

  // AddRoute (NLM_F_EXCL) and AppendRoute (NLM_F_APPEND).
  Status InsertRoute(const RouteInfo& in, bool append);

  // The kernel's refusal of the call Begin logged last.
  Error Fail(const std::string& what, int err) { return world_->Fail(what, err); }

  World* world_;
  int ns_id_;
};

std::unique_ptr<netlink::Kernel> World::Kernel(int ns_id) {
  Ns(ns_id);  // throws for an unknown id
  return std::make_unique<FakeKernel>(this, ns_id);
}

// --- links -------------------------------------------------------------------

Status FakeKernel::MoveLink(const LinkInfo& link_read, const netlink::Kernel& target,
                            std::string_view new_name) {
  const int index = link_read.index;
  const int to_id = target.NetnsFd();
  const bool known = to_id >= 0 && static_cast<size_t>(to_id) < world_->netns_.size();
  std::string what = "MoveLink " + std::to_string(index) + " -> " +
                     (known ? world_->netns_[to_id].name : "netns#" + std::to_string(to_id));
  if (!new_name.empty()) what += " as " + std::string(new_name);
  if (auto e = Begin(what)) return *e;

  World::Netns& from = ns();
  LinkInfo* link = World::FindLink(from, index);
  if (!link) return Fail(what, ENODEV);
  if (!known) return Fail(what, EINVAL);  // the fd is not a network namespace
  // NETIF_F_NETNS_LOCAL: "The device is not allowed to change namespace".
  if (world_->loopbacks_.contains(index)) return Fail(what, EINVAL);
  World::Netns& to = world_->netns_[to_id];
  if (!to.alive) return Fail(what, ENODEV);
  // No IFLA_IFNAME: the link keeps its name.
  const std::string name = new_name.empty() ? link->name : std::string(new_name);
  if (!ValidIfName(name)) return Fail(what, EINVAL);

  if (to_id == ns_id_) {
    // __dev_change_net_namespace returns early for the same namespace; the
    // name is then applied as a plain rename.
    const LinkInfo* holder = World::FindLinkByName(from, name);
    if (holder && holder->index != index) return Fail(what, EEXIST);
    link->name = name;
    return base::Ok();
  }
  if (World::FindLinkByName(to, name)) return Fail(what, EEXIST);

  // The move closes the device (dev_close: admin down) and unregisters it
  // from the old namespace, which flushes its addresses and every route
  // through it; it arrives down, with no addresses, keeping index (indices are
  // global here, so always free), mac and mtu.
  LinkInfo moved = *link;
  World::FlushLink(from, index);
  std::erase_if(from.links, [&](const LinkInfo& l) { return l.index == index; });
  moved.name = name;
  moved.up = false;
  to.links.push_back(std::move(moved));
  return base::Ok();
}

Status FakeKernel::RenameLink(int index, std::string_view new_name) {
  const std::string what = "RenameLink " + std::to_string(index) + " to " + std::string(new_name);
  if (auto e = Begin(what)) return *e;
  LinkInfo* link = World::FindLink(ns(), index);
  if (!link) return Fail(what, ENODEV);
  if (!ValidIfName(new_name)) return Fail(what, EINVAL);
  const LinkInfo* holder = World::FindLinkByName(ns(), new_name);
  if (holder && holder->index != index) return Fail(what, EEXIST);
  // Linux >= 6.2 renames an UP device too, so no EBUSY here.
  link->name = std::string(new_name);
  return base::Ok();
}

Status FakeKernel::SetMtu(int index, uint32_t mtu) {
  const std::string what = "SetMtu " + std::to_string(index) + " " + std::to_string(mtu);
  if (auto e = Begin(what)) return *e;
  LinkInfo* link = World::FindLink(ns(), index);
  if (!link) return Fail(what, ENODEV);
  // ETH_MIN_MTU..IP_MAX_MTU; real drivers have narrower limits.
  if (mtu < 68 || mtu > 65535) return Fail(what, EINVAL);
  link->mtu = mtu;
  return base::Ok();
}

Status FakeKernel::SetUp(int index, bool up) {
  const std::string what = "SetUp " + std::to_string(index) + (up ? " up" : " down");
  if (auto e = Begin(what)) return *e;
  LinkInfo* link = World::FindLink(ns(), index);
  if (!link) return Fail(what, ENODEV);
  if (link->up == up) return base::Ok();
  link->up = up;
  if (up) {
    // NETDEV_UP: fib_add_ifaddr / addrconf re-add the prefix routes.
    World::AddPrefixRoutes(ns(), index);
  } else {
    // NETDEV_DOWN: fib_disable_ip and rt6_sync_down_dev drop every route
    // through the device, static ones included.
    World::RemoveRoutesVia(ns(), index);
  }
  return base::Ok();
}

Status FakeKernel::SetMac(int index, std::string_view mac) {
  const std::string what = "SetMac " + std::to_string(index) + " " + std::string(mac);
  if (auto e = Begin(what)) return *e;
  LinkInfo* link = World::FindLink(ns(), index);
  if (!link) return Fail(what, ENODEV);
  // eth_prepare_mac_addr_change: EBUSY on a running device without
  // IFF_LIVE_ADDR_CHANGE (modelled: physical ones); eth_validate_addr:
  // EADDRNOTAVAIL for a multicast or all-zero address.
  if (link->up && link->kind.empty()) return Fail(what, EBUSY);
  if (!ValidUnicastMac(mac)) return Fail(what, EADDRNOTAVAIL);
  link->mac = std::string(mac);
  return base::Ok();
}

Status FakeKernel::AddChildLink(const netlink::ChildLinkSpec& spec, const netlink::Kernel& target) {
  const int to_id = target.NetnsFd();
  const bool known = to_id >= 0 && static_cast<size_t>(to_id) < world_->netns_.size();
  const std::string what = "AddChildLink " + spec.kind + " " + spec.name + " on " +
                           std::to_string(spec.parent_index) + " in " +
                           (known ? world_->netns_[to_id].name : "netns#" + std::to_string(to_id));
  if (auto e = Begin(what)) return *e;
  if (spec.kind != "macvlan" && spec.kind != "ipvlan") return Fail(what, EOPNOTSUPP);
  const LinkInfo* parent = World::FindLink(ns(), spec.parent_index);
  if (!parent) return Fail(what, ENODEV);
  if (!known) return Fail(what, EINVAL);
  World::Netns& to = world_->netns_[to_id];
  if (!to.alive) return Fail(what, ENODEV);
  if (!ValidIfName(spec.name)) return Fail(what, EINVAL);
  if (World::FindLinkByName(to, spec.name)) return Fail(what, EEXIST);
  if (spec.mtu && spec.mtu > parent->mtu) return Fail(what, EINVAL);
  constexpr uint32_t kPassthru = 8;  // MACVLAN_MODE_PASSTHRU
  const bool passthru = spec.kind == "macvlan" && spec.mode == kPassthru;
  for (const auto& [index, c] : world_->children_) {
    if (c.parent != spec.parent_index) continue;
    if (c.kind != spec.kind) return Fail(what, EBUSY);
    if (passthru || (c.kind == "macvlan" && c.mode == kPassthru)) return Fail(what, EINVAL);
  }
  LinkInfo child;
  child.index = world_->NewIndex();
  child.name = spec.name;
  child.kind = spec.kind;
  child.mtu = spec.mtu ? spec.mtu : parent->mtu;
  if (!spec.mac.empty()) {
    child.mac = spec.mac;
  } else if (spec.kind == "ipvlan" || passthru) {
    child.mac = parent->mac;
  } else {
    char buf[18];
    std::snprintf(buf, sizeof buf, "02:fa:00:00:%02x:%02x", (child.index >> 8) & 0xff, child.index & 0xff);
    child.mac = buf;
  }
  world_->children_[child.index] = World::Child{spec.parent_index, spec.kind, spec.mode};
  to.links.push_back(std::move(child));
  return base::Ok();
}

Status FakeKernel::DeleteLink(int index) {
  const std::string what = "DeleteLink " + std::to_string(index);
  if (auto e = Begin(what)) return *e;
  const LinkInfo* link = World::FindLink(ns(), index);
  if (!link) return Fail(what, ENODEV);
  // Physical devices have no rtnl_link_ops->dellink.
  if (link->kind.empty()) return Fail(what, EOPNOTSUPP);
  world_->DestroyLink(index);
  return base::Ok();
}

// --- addresses ---------------------------------------------------------------

Status FakeKernel::AddAddr(const AddrInfo& addr) {
  const std::string what = "AddAddr " + DescribeAddr(addr);
  if (auto e = Begin(what)) return *e;
  const int family = addr.local.addr.family;
  if (!KnownFamily(family)) return Fail(what, EAFNOSUPPORT);
  if (addr.local.len < 0 || addr.local.len > addr.local.addr.BitLength()) return Fail(what, EINVAL);
  if (addr.broadcast && (family != AF_INET || addr.broadcast->family != AF_INET)) return Fail(what, EINVAL);
  World::Netns& n = ns();
  const LinkInfo* link = World::FindLink(n, addr.ifindex);
  if (!link) return Fail(what, ENODEV);
  for (const AddrInfo& a : n.addrs) {
    // IPv4 refuses the same local with the same mask (another mask makes a
    // second address); IPv6 refuses the same address on the device whatever
    // the prefix length.
    if (a.ifindex == addr.ifindex && a.local.addr == addr.local.addr &&
        (family == AF_INET6 || a.local.len == addr.local.len))
      return Fail(what, EEXIST);
  }
  n.addrs.push_back(addr);
  if (link->up) World::AddPrefixRoute(n, addr);
  return base::Ok();
}

Status FakeKernel::DelAddr(const AddrInfo& addr) {
  const std::string what = "DelAddr " + DescribeAddr(addr);
  if (auto e = Begin(what)) return *e;
  World::Netns& n = ns();
  if (!World::FindLink(n, addr.ifindex)) return Fail(what, ENODEV);
  for (size_t i = 0; i < n.addrs.size(); ++i) {
    const AddrInfo& a = n.addrs[i];
    if (a.ifindex == addr.ifindex && a.local == addr.local) {
      World::RemoveAddrAt(n, i);
      return base::Ok();
    }
  }
  return Fail(what, EADDRNOTAVAIL);
}

// --- routes ------------------------------------------------------------------

Status FakeKernel::InsertRoute(const RouteInfo& in, bool append) {
  const std::string what = (append ? "AppendRoute " : "AddRoute ") + DescribeRoute(in);
  if (auto e = Begin(what)) return *e;
  RouteInfo route = in;
  if (route.table == 0) route.table = netlink::kTableMain;  // RT_TABLE_UNSPEC means main
  // A multipath route is its legs (RTA_MULTIPATH); listed, it names the first.
  if (route.nexthops.size() == 1) route.nexthops.clear();
  if (!route.nexthops.empty())
    std::tie(route.oif, route.gateway) = std::tie(in.nexthops[0].oif, in.nexthops[0].gateway);
  const int family = route.family();
  if (!KnownFamily(family)) return Fail(what, EAFNOSUPPORT);
  if (route.dst.len < 0 || route.dst.len > route.dst.addr.BitLength() || route.dst != route.dst.Network())
    return Fail(what, EINVAL);  // "Invalid prefix for given prefix length"
  if ((route.gateway && route.gateway->family != family) ||
      (route.prefsrc && route.prefsrc->family != family))
    return Fail(what, EINVAL);
  // Fake limitation: every route names its device (erdma-cni's always do).
  if (route.oif == 0) return Fail(what, EINVAL);
  World::Netns& n = ns();
  const LinkInfo* link = World::FindLink(n, route.oif);
  if (!link) return Fail(what, ENODEV);
  if (!link->up) return Fail(what, ENETDOWN);  // "Nexthop device is not up"
  if (route.gateway && !(family == AF_INET6 && route.gateway->IsLinkLocal())) {
    // fib_check_nh / ip6_validate_gw: the gateway must be on-link, i.e. covered
    // by a direct route through the same device in this table or main.
    const bool onlink = std::any_of(n.routes.begin(), n.routes.end(), [&](const RouteInfo& r) {
      return r.family() == family && r.oif == route.oif && !r.gateway && r.type == 1 &&
             (r.table == route.table || r.table == netlink::kTableMain) && r.dst.Contains(*route.gateway);
    });
    if (!onlink) return Fail(what, ENETUNREACH);
  }
  if (route.prefsrc) {
    // "Invalid prefsrc address": it must be an address of this namespace.
    const bool local = std::any_of(n.addrs.begin(), n.addrs.end(),
                                   [&](const AddrInfo& a) { return a.local.addr == *route.prefsrc; });
    if (!local) return Fail(what, EINVAL);
  }
  // NLM_F_EXCL refuses any route of the key; NLM_F_APPEND only an identical one.
  for (const RouteInfo& r : n.routes)
    if (World::SameRouteKey(r, route) && (!append || r == route)) return Fail(what, EEXIST);
  n.routes.push_back(route);
  return base::Ok();
}

Status FakeKernel::DelRoute(const RouteInfo& in) {
  const std::string what = "DelRoute " + DescribeRoute(in);
  if (auto e = Begin(what)) return *e;
  const uint32_t table = in.table == 0 ? netlink::kTableMain : in.table;
  World::Netns& n = ns();
  // fib_table_delete / ip6_route_del: fields left unset (metric 0, oif 0, no
  // gateway or prefsrc, protocol 0, type 0) match anything; scope is not
  // compared. Among several matches the lowest metric goes.
  auto best = n.routes.end();
  for (auto it = n.routes.begin(); it != n.routes.end(); ++it) {
    const RouteInfo& r = *it;
    if (r.table != table || r.family() != in.family() || r.dst != in.dst) continue;
    if (in.metric != 0 && r.metric != in.metric) continue;
    if (in.oif != 0 && r.oif != in.oif) continue;
    if (in.gateway && r.gateway != in.gateway) continue;
    if (in.prefsrc && r.prefsrc != in.prefsrc) continue;
    if (in.protocol != 0 && r.protocol != in.protocol) continue;
    if (in.type != 0 && r.type != in.type) continue;
    if (best == n.routes.end() || r.metric < best->metric) best = it;
  }
  if (best == n.routes.end()) return Fail(what, ESRCH);
  n.routes.erase(best);
  return base::Ok();
}

// --- rules -------------------------------------------------------------------

Status FakeKernel::AddRule(const RuleInfo& rule) {
  const std::string what = "AddRule " + DescribeRule(rule);
  if (auto e = Begin(what)) return *e;
  World::Netns& n = ns();
  if (!n.alive) return Fail(what, ENODEV);
  if (!KnownFamily(rule.family)) return Fail(what, EAFNOSUPPORT);
  if (rule.src && (rule.src->addr.family != rule.family || rule.src->len < 0 ||
                   rule.src->len > rule.src->addr.BitLength()))
    return Fail(what, EINVAL);
  if (rule.table == 0) return Fail(what, EINVAL);  // FR_ACT_TO_TBL needs a table
  // With NLM_F_EXCL, rule_exists refuses a rule equal in every field.
  for (const RuleInfo& r : n.rules)
    if (r == rule) return Fail(what, EEXIST);
  World::InsertRule(n, rule);
  return base::Ok();
}

Status FakeKernel::DelRule(const RuleInfo& rule) {
  const std::string what = "DelRule " + DescribeRule(rule);
  if (auto e = Begin(what)) return *e;
  World::Netns& n = ns();
  auto it = std::find(n.rules.begin(), n.rules.end(), rule);
  if (it == n.rules.end()) return Fail(what, ENOENT);
  n.rules.erase(it);
  return base::Ok();
}

}  // namespace fake
