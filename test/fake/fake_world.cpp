// fake::World: namespaces, setup, and the kernel behaviour shared by the
// handles (prefix routes, flushing a link, namespace teardown).
#include <sys/socket.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "test/fake/fake_kernel.h"

namespace fake {

using netlink::AddrInfo;
using netlink::LinkInfo;
using netlink::RouteInfo;
using netlink::RuleInfo;

namespace {

constexpr uint32_t kTableDefault = 253;  // RT_TABLE_DEFAULT

// What `ip rule` shows in a fresh namespace.
void AddDefaultRules(std::vector<RuleInfo>* rules) {
  *rules = {
      {AF_INET, 0, std::nullopt, netlink::kTableLocal},
      {AF_INET, 32766, std::nullopt, netlink::kTableMain},
      {AF_INET, 32767, std::nullopt, kTableDefault},
      {AF_INET6, 0, std::nullopt, netlink::kTableLocal},
      {AF_INET6, 32766, std::nullopt, netlink::kTableMain},
  };
}

}  // namespace

World::World() { netns_.push_back(NewNetns("root")); }

World::~World() = default;

World::Netns World::NewNetns(std::string name) {
  Netns ns;
  ns.name = std::move(name);
  AddDefaultRules(&ns.rules);
  return ns;
}

World::Netns& World::Ns(int id) {
  if (id < 0 || static_cast<size_t>(id) >= netns_.size())
    throw std::out_of_range("fake::World: no namespace " + std::to_string(id));
  return netns_[id];
}

const World::Netns& World::Ns(int id) const { return const_cast<World*>(this)->Ns(id); }

int World::AddNetns(std::string name) {
  if (name.empty()) throw std::invalid_argument("fake::World::AddNetns: empty name");
  for (const Netns& ns : netns_)
    if (ns.name == name) throw std::invalid_argument("fake::World::AddNetns: " + name + " exists");
  netns_.push_back(NewNetns(std::move(name)));
  return static_cast<int>(netns_.size()) - 1;
}

bool World::NetnsAlive(int id) const { return Ns(id).alive; }

const std::string& World::NetnsName(int id) const { return Ns(id).name; }

void World::DeleteNetns(int id) {
  if (id == kRoot) throw std::invalid_argument("fake::World::DeleteNetns: root cannot go");
  Netns& ns = Ns(id);
  if (!ns.alive) throw std::invalid_argument("fake::World::DeleteNetns: already deleted");
  std::vector<LinkInfo> links = ns.links;
  std::sort(links.begin(), links.end(),
            [](const LinkInfo& a, const LinkInfo& b) { return a.index < b.index; });
  Netns& root = netns_[kRoot];
  for (const LinkInfo& l : links) {
    if (!FindLink(ns, l.index)) continue;  // a veth peer destroyed with its twin
    if (!l.kind.empty() || loopbacks_.contains(l.index)) {
      // Devices with rtnl_link_ops and no netns_refund are unregistered with
      // the namespace (default_device_exit_batch), a veth's peer with them;
      // loopback goes in loopback_net_exit.
      DestroyLink(l.index);
      continue;
    }
    // default_device_exit_net pushes the rest to init_net, keeping the name
    // when it is free there, else "dev<ifindex>", else "dev%d".
    FlushLink(ns, l.index);
    LinkInfo moved = *FindLink(ns, l.index);
    std::erase_if(ns.links, [&](const LinkInfo& x) { return x.index == l.index; });
    if (FindLinkByName(root, moved.name)) {
      moved.name = "dev" + std::to_string(moved.index);
      for (int n = 0; FindLinkByName(root, moved.name); ++n) moved.name = "dev" + std::to_string(n);
    }
    moved.up = false;
    root.links.push_back(std::move(moved));
  }
  ns.addrs.clear();
  ns.routes.clear();
  ns.rules.clear();
  ns.alive = false;
}

int World::NewIndex() { return next_index_++; }

int World::AddLink(int ns_id, LinkInfo link) {
  Netns& ns = Ns(ns_id);
  if (!ns.alive) throw std::invalid_argument("fake::World::AddLink: namespace deleted");
  if (link.name.empty() || FindLinkByName(ns, link.name))
    throw std::invalid_argument("fake::World::AddLink: bad or taken name '" + link.name + "'");
  if (link.index == 0) {
    link.index = NewIndex();
  } else {
    if (link.index < 0 || NetnsOfLink(link.index) >= 0)
      throw std::invalid_argument("fake::World::AddLink: index " + std::to_string(link.index) + " taken");
    next_index_ = std::max(next_index_, link.index + 1);
  }
  if (link.mtu == 0) link.mtu = 1500;
  if (link.name == "lo" && link.kind.empty()) loopbacks_.insert(link.index);
  ns.links.push_back(link);
  return link.index;
}

std::pair<int, int> World::AddVeth(int ns, LinkInfo a, int peer_ns, LinkInfo b) {
  a.kind = b.kind = "veth";
  const int ia = AddLink(ns, std::move(a));
  const int ib = AddLink(peer_ns, std::move(b));
  peers_[ia] = ib;
  peers_[ib] = ia;
  return {ia, ib};
}

void World::DestroyLink(int index) {
  const int ns_id = NetnsOfLink(index);
  if (ns_id < 0) throw std::invalid_argument("fake::World::DestroyLink: no link " + std::to_string(index));
  Netns& ns = netns_[ns_id];
  FlushLink(ns, index);
  std::erase_if(ns.links, [&](const LinkInfo& x) { return x.index == index; });
  loopbacks_.erase(index);
  children_.erase(index);
  // NETDEV_UNREGISTER on a lower device takes its macvlan/ipvlan children.
  std::vector<int> orphans;
  for (const auto& [child, c] : children_)
    if (c.parent == index) orphans.push_back(child);
  for (int child : orphans)
    if (NetnsOfLink(child) >= 0) DestroyLink(child);
  auto peer = peers_.find(index);
  if (peer == peers_.end()) return;
  const int other = peer->second;
  peers_.erase(index);
  peers_.erase(other);
  if (NetnsOfLink(other) >= 0) DestroyLink(other);
}

int World::NetnsOfLink(int index) const {
  for (size_t id = 0; id < netns_.size(); ++id)
    for (const LinkInfo& l : netns_[id].links)
      if (l.index == index) return static_cast<int>(id);
  return -1;
}

std::optional<LinkInfo> World::LinkByIndex(int index) const {
  for (const Netns& ns : netns_)
    for (const LinkInfo& l : ns.links)
      if (l.index == index) return l;
  return std::nullopt;
}

void World::SetLinkMac(int index, std::string mac) {
  for (Netns& ns : netns_)
    if (LinkInfo* l = FindLink(ns, index)) {
      l->mac = std::move(mac);
      return;
    }
  throw std::out_of_range("fake::World::SetLinkMac: no link " + std::to_string(index));
}

// --- the model ---------------------------------------------------------------

LinkInfo* World::FindLink(Netns& ns, int index) {
  for (LinkInfo& l : ns.links)
    if (l.index == index) return &l;
  return nullptr;
}

LinkInfo* World::FindLinkByName(Netns& ns, std::string_view name) {
  for (LinkInfo& l : ns.links)
    if (l.name == name) return &l;
  return nullptr;
}

std::optional<RouteInfo> World::PrefixRoute(const AddrInfo& addr) {
  if (addr.flags & netlink::kAddrFlagNoPrefixRoute) return std::nullopt;
  const bool v4 = addr.local.addr.family == AF_INET;
  // fib_add_ifaddr skips the prefix route of an IPv4 /32 (prefix == address);
  // addrconf adds one for an IPv6 /128 all the same.
  if (v4 && addr.local.len == 32) return std::nullopt;
  RouteInfo r;
  r.dst = addr.local.Network();
  r.oif = addr.ifindex;
  r.table = netlink::kTableMain;
  r.protocol = netlink::kProtoKernel;
  if (v4) {
    r.metric = 0;
    r.scope = netlink::kScopeLink;
    r.prefsrc = addr.local.addr;
  } else {
    r.metric = 256;  // IP6_RT_PRIO_ADDRCONF; IPv6 routes always report scope universe
    r.scope = netlink::kScopeUniverse;
  }
  return r;
}

// How the kernel tells routes apart for NLM_F_EXCL: IPv4 by table, dst, tos
// and priority; IPv6 by table, dst (and src) and metric, whatever the nexthop.
bool World::SameRouteKey(const RouteInfo& a, const RouteInfo& b) {
  return a.table == b.table && a.family() == b.family() && a.dst == b.dst && a.metric == b.metric;
}

void World::AddPrefixRoute(Netns& ns, const AddrInfo& addr) {
  auto r = PrefixRoute(addr);
  if (!r) return;
  // A second address in the same subnet (an IPv4 secondary) adds no second route.
  for (const RouteInfo& x : ns.routes)
    if (SameRouteKey(x, *r)) return;
  ns.routes.push_back(*r);
}

void World::AddPrefixRoutes(Netns& ns, int index) {
  for (const AddrInfo& a : ns.addrs)
    if (a.ifindex == index) AddPrefixRoute(ns, a);
}

void World::RemoveRoutesVia(Netns& ns, int index) {
  // A multipath route goes whole when one leg's device leaves, as IPv4's
  // does (IPv6 drops just that leg: not modelled).
  std::erase_if(ns.routes, [&](const RouteInfo& r) {
    return r.oif == index || std::any_of(r.nexthops.begin(), r.nexthops.end(),
                                         [&](const netlink::Nexthop& n) { return n.oif == index; });
  });
}

void World::RemoveAddrAt(Netns& ns, size_t pos) {
  const AddrInfo gone = ns.addrs[pos];
  ns.addrs.erase(ns.addrs.begin() + static_cast<std::ptrdiff_t>(pos));
  if (auto prefix = PrefixRoute(gone)) {
    std::erase_if(ns.routes, [&](const RouteInfo& r) {
      return SameRouteKey(r, *prefix) && r.oif == gone.ifindex && r.protocol == netlink::kProtoKernel;
    });
    // Another address of the link in the same subnet keeps the route
    // (the kernel promotes a secondary); it then carries that address as src.
    const LinkInfo* link = FindLink(ns, gone.ifindex);
    if (link && link->up)
      for (const AddrInfo& a : ns.addrs) {
        auto other = PrefixRoute(a);
        if (a.ifindex == gone.ifindex && other && SameRouteKey(*other, *prefix)) AddPrefixRoute(ns, a);
      }
  }
  // fib_del_ifaddr -> fib_sync_down_addr: IPv4 routes whose prefsrc was this
  // address die with it, unless the namespace still has the address elsewhere.
  if (gone.local.addr.family == AF_INET) {
    const bool still_local = std::any_of(ns.addrs.begin(), ns.addrs.end(),
                                         [&](const AddrInfo& a) { return a.local.addr == gone.local.addr; });
    if (!still_local)
      std::erase_if(ns.routes, [&](const RouteInfo& r) { return r.prefsrc == gone.local.addr; });
  }
}

void World::FlushLink(Netns& ns, int index) {
  for (size_t i = ns.addrs.size(); i-- > 0;)
    if (ns.addrs[i].ifindex == index) RemoveAddrAt(ns, i);
  RemoveRoutesVia(ns, index);
}

// Rules are kept sorted by priority within a family (IPv4 listed first);
// a new rule goes after the existing ones of the same priority.
void World::InsertRule(Netns& ns, const RuleInfo& rule) {
  auto pos = std::find_if(ns.rules.begin(), ns.rules.end(), [&](const RuleInfo& r) {
    return std::tie(r.family, r.priority) > std::tie(rule.family, rule.priority);
  });
  ns.rules.insert(pos, rule);
}

// --- snapshots ---------------------------------------------------------------

fake::Snapshot World::Snapshot() const {
  fake::Snapshot s;
  for (size_t id = 0; id < netns_.size(); ++id) {
    const Netns& ns = netns_[id];
    NetnsState st{static_cast<int>(id), ns.name, ns.alive, ns.links, ns.addrs, ns.routes, ns.rules};
    std::sort(st.links.begin(), st.links.end(),
              [](const LinkInfo& a, const LinkInfo& b) { return a.index < b.index; });
    std::sort(st.addrs.begin(), st.addrs.end(), [](const AddrInfo& a, const AddrInfo& b) {
      return std::tie(a.ifindex, a.local.addr.family, a.local, a.flags, a.scope, a.broadcast) <
             std::tie(b.ifindex, b.local.addr.family, b.local, b.flags, b.scope, b.broadcast);
    });
    std::sort(st.routes.begin(), st.routes.end(), [](const RouteInfo& a, const RouteInfo& b) {
      return std::tuple(a.table, a.family(), a.dst, a.metric, a.oif, a.gateway, a.prefsrc, a.scope,
                        a.protocol, a.type) < std::tuple(b.table, b.family(), b.dst, b.metric, b.oif,
                                                         b.gateway, b.prefsrc, b.scope, b.protocol, b.type);
    });
    std::sort(st.rules.begin(), st.rules.end(), [](const RuleInfo& a, const RuleInfo& b) {
      return std::tie(a.family, a.priority, a.table, a.src) < std::tie(b.family, b.priority, b.table, b.src);
    });
    s.netns.push_back(std::move(st));
  }
  s.veth_peers = peers_;
  return s;
}

}  // namespace fake
