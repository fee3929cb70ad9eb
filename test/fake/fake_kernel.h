// A stateful, in-memory fake of netlink::Kernel for unit tests (a fake that
// keeps state, not a mock that replays calls): one World holds several network namespaces;
// links move between them the way Linux moves them, addresses bring their
// kernel prefix routes, and every mutating call is counted and logged so a
// test can fail the Nth one and check that rollback restores the Snapshot.
//
// Model, in short (the .cpp files say why for each kernel fact):
//  - Interface indices are global across the World; auto-assigned ones are
//    never reused.
//  - MoveLink brings the link down and flushes its addresses and every route
//    through it (and IPv4 routes using one of its addresses as prefsrc).
//  - An address without kAddrFlagNoPrefixRoute on an UP link has a prefix
//    route in table main, protocol kernel: IPv4 scope link, metric 0, prefsrc
//    the address, none for a /32; IPv6 scope universe (IPv6 routes have no
//    scope), metric 256, also for a /128. Setting a link down removes every
//    route through it; setting it up brings the prefix routes back.
//  - No local table routes, no IPv6 link-local addresses, addresses are kept
//    when a link goes down (IPv6 included: keep_addr_on_down is not modelled).
//  - Each namespace starts with the kernel's default rules: IPv4 0 local,
//    32766 main, 32767 default(253); IPv6 0 local, 32766 main.
//  - AddRoute needs oif (fake limitation, EINVAL), the device UP (ENETDOWN),
//    a gateway on-link through a direct route on that oif in its table or main
//    (ENETUNREACH; IPv6 link-local gateways always are), a prefsrc that is an
//    address of the namespace (EINVAL) and dst without host bits (EINVAL);
//    table 0 means main. Same table+family+dst+metric is EEXIST; AppendRoute
//    refuses (EEXIST) only an identical route. A multipath route is listed
//    through each leg's device and removed whole when one leg's device
//    leaves (IPv4's way; IPv6 drops only that leg: not modelled).
//  - DelRoute matches like the kernel: table, dst, and the metric, oif,
//    gateway, prefsrc, protocol and type when they are set (metric 0 = any,
//    the lowest matching metric goes first); scope is not compared.
//  - SetMac refuses an up physical link (EBUSY: no IFF_LIVE_ADDR_CHANGE
//    modelled for them) and a multicast or all-zero address (EADDRNOTAVAIL).
//  - A link named "lo" (empty kind) added by AddLink is a loopback: MoveLink
//    refuses it (EINVAL) and DeleteNetns destroys it with the namespace.
//  - AddChildLink makes a macvlan/ipvlan link (down, the parent's MTU unless
//    set, the parent's MAC for ipvlan and passthru, else a made-up one)
//    directly in the target namespace. A parent with a passthru child takes
//    no other child, nor a passthru one next to others (EINVAL); macvlan and
//    ipvlan children cannot share a parent (EBUSY: one rx handler). Children
//    die with their parent and, being virtual, with their namespace.
//  - A namespace removed with DeleteNetns stays addressable as an empty, dead
//    namespace: a handle bound to it keeps "working" (reads return nothing,
//    link/address/route verbs fail with ENODEV because no link exists, AddRule
//    and MoveLink into it fail with ENODEV, deletes fail with their not-found
//    errno). The real kernel would keep a referenced namespace alive; the fake
//    lets a test model "the namespace is gone" with a handle still in hand.
#pragma once

#include <cerrno>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "netlink/rtnl_kernel.h"
#include "test/fake/call_log.h"

namespace fake {

class FakeKernel;

/// One namespace as a Snapshot sees it, each list in canonical order.
struct NetnsState {
  int id = 0;
  std::string name;
  bool alive = true;
  std::vector<netlink::LinkInfo> links;    ///< by index
  std::vector<netlink::AddrInfo> addrs;    ///< by ifindex, family, address
  std::vector<netlink::RouteInfo> routes;  ///< by table, family, dst, metric, oif, ...
  std::vector<netlink::RuleInfo> rules;    ///< by family, priority, table, src

  bool operator==(const NetnsState&) const = default;
};

/// The whole World at one moment. Compare with ==; on a mismatch print
/// DiffSnapshots(before, after), or stream it (Catch prints Describe()).
struct Snapshot {
  std::vector<NetnsState> netns;  ///< by id, deleted ones included (empty)
  std::map<int, int> veth_peers;  ///< ifindex -> peer ifindex, both directions

  bool operator==(const Snapshot&) const = default;
  /// One line per namespace, link, address, route and rule, each prefixed
  /// with its namespace's name, in canonical order.
  std::string Describe() const;
};

std::ostream& operator<<(std::ostream& os, const Snapshot& s);

/// "" when equal; otherwise the differing lines of Describe(), "- " for a
/// only, "+ " for b only. `CHECK(DiffSnapshots(before, w.Snapshot()) == "")`
/// prints just the difference when it fails.
std::string DiffSnapshots(const Snapshot& a, const Snapshot& b);

/// The text calls() and Describe() use for one object, e.g.
/// "10.0.0.0/24 dev 5 table 254 metric 0 proto kernel scope link src 10.0.0.2".
std::string DescribeLink(const netlink::LinkInfo& link);
std::string DescribeAddr(const netlink::AddrInfo& addr);
std::string DescribeRoute(const netlink::RouteInfo& route);
std::string DescribeRule(const netlink::RuleInfo& rule);

/// Network namespaces and the devices in them. Not copyable; it must outlive
/// every Kernel handle it gave out. Setup methods throw std::invalid_argument
/// or std::out_of_range on a bad request (a bug in the test, not a kernel
/// error); they are not kernel calls and are neither counted nor logged.
/// Mutating calls (CallLog): MoveLink, RenameLink, SetMtu, SetUp, SetMac,
/// AddChildLink, DeleteLink, AddAddr, DelAddr, AddRoute, DelRoute, AddRule,
/// DelRule, on any handle.
class World : public CallLog {
 public:
  static constexpr int kRoot = 0;  ///< the root namespace, named "root"

  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  /// A new, empty namespace (default rules only). Its id is what handles
  /// bound to it return from NetnsFd(). Names must be unique; they appear in
  /// calls() and Describe().
  int AddNetns(std::string name);
  /// Destroys a namespace as the kernel does when its last reference goes:
  /// physical links (empty kind) go to root, down, flushed, keeping their name
  /// unless root has it (then "dev<index>"); virtual links are destroyed, a
  /// veth's peer with them wherever it is; routes and rules vanish.
  void DeleteNetns(int id);
  bool NetnsAlive(int id) const;
  const std::string& NetnsName(int id) const;

  /// A handle speaking to one namespace, like an rtnetlink socket opened in it.
  std::unique_ptr<netlink::Kernel> Kernel(int ns_id);

  /// Adds a link as if it had always been there. index 0 gets the next free
  /// global index; mtu 0 becomes 1500. Returns the index. A link named "lo"
  /// with an empty kind is the namespace's loopback: it cannot move (EINVAL)
  /// and dies with its namespace instead of going to root.
  int AddLink(int ns, netlink::LinkInfo link);
  /// Adds a veth pair (kind forced to "veth"); returns {a's index, b's index}.
  std::pair<int, int> AddVeth(int ns, netlink::LinkInfo a, int peer_ns, netlink::LinkInfo b);
  /// Unregisters a link (and a veth's peer) as `ip link del` or a hot unplug.
  void DestroyLink(int index);
  /// The namespace a link is in now; -1 when it does not exist.
  int NetnsOfLink(int index) const;
  /// The link with this index, wherever it is.
  std::optional<netlink::LinkInfo> LinkByIndex(int index) const;
  /// Changes a link's MAC as its driver would on its own (an SR-IOV VF
  /// whose administrative MAC was set through its PF); not a kernel call.
  void SetLinkMac(int index, std::string mac);

  fake::Snapshot Snapshot() const;

 private:
  friend class FakeKernel;

  struct Netns {
    std::string name;
    bool alive = true;
    std::vector<netlink::LinkInfo> links;  // insertion order
    std::vector<netlink::AddrInfo> addrs;
    std::vector<netlink::RouteInfo> routes;
    std::vector<netlink::RuleInfo> rules;  // by family, priority, insertion
  };

  static Netns NewNetns(std::string name);
  Netns& Ns(int id);
  const Netns& Ns(int id) const;
  int NewIndex();

  // The model shared by setup methods and kernel handles.
  static netlink::LinkInfo* FindLink(Netns& ns, int index);
  static netlink::LinkInfo* FindLinkByName(Netns& ns, std::string_view name);
  static std::optional<netlink::RouteInfo> PrefixRoute(const netlink::AddrInfo& addr);
  static bool SameRouteKey(const netlink::RouteInfo& a, const netlink::RouteInfo& b);
  static void AddPrefixRoute(Netns& ns, const netlink::AddrInfo& addr);
  static void AddPrefixRoutes(Netns& ns, int index);
  static void RemoveRoutesVia(Netns& ns, int index);
  static void RemoveAddrAt(Netns& ns, size_t pos);
  static void FlushLink(Netns& ns, int index);
  static void InsertRule(Netns& ns, const netlink::RuleInfo& rule);

  std::vector<Netns> netns_;  // indexed by id
  std::map<int, int> peers_;
  struct Child {
    int parent = 0;
    std::string kind;
    uint32_t mode = 0;
  };
  std::map<int, Child> children_;  // by child index
  std::set<int> loopbacks_;        // IFF_LOOPBACK / NETIF_F_NETNS_LOCAL devices
  int next_index_ = 1;
};

}  // namespace fake
