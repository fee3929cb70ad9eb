// The syscall boundary: the rtnetlink verbs erdma-cni needs, for one network namespace (rtnl_socket.h); tests
// use an in-memory fake (test/fake/fake_kernel.h) that can fail the Nth call.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error.h"
#include "netlink/ip.h"

namespace netlink {

using base::Result;
using base::Status;

/// Route table ids and protocol/scope values as the kernel numbers them.
inline constexpr uint32_t kTableDefault = 253;
inline constexpr uint32_t kTableMain = 254;
inline constexpr uint32_t kTableLocal = 255;
inline constexpr uint8_t kProtoKernel = 2;  // RTPROT_KERNEL: made by the kernel for an address
inline constexpr uint8_t kProtoBoot = 3;    // RTPROT_BOOT: what `ip route add` uses
inline constexpr uint8_t kProtoStatic = 4;  // RTPROT_STATIC: what erdma-cni uses
inline constexpr uint8_t kScopeUniverse = 0;
inline constexpr uint8_t kScopeLink = 253;
inline constexpr uint8_t kScopeHost = 254;
inline constexpr uint32_t kAddrFlagNoPrefixRoute = 0x200;  // IFA_F_NOPREFIXROUTE
inline constexpr uint32_t kAddrFlagNoDad = 0x02;           // IFA_F_NODAD

struct LinkInfo {
  int index = 0;
  std::string name;
  std::string mac;  ///< "aa:bb:cc:dd:ee:ff" lower case; empty when the link has none
  uint32_t mtu = 0;
  bool up = false;   ///< administrative state (IFF_UP)
  std::string kind;  ///< IFLA_INFO_KIND ("veth", "macvlan", ...); empty for physical devices

  bool operator==(const LinkInfo&) const = default;
};

/// A macvlan or ipvlan link to create on a parent (RTM_NEWLINK, IFLA_LINK).
struct ChildLinkSpec {
  std::string kind;  ///< "macvlan" or "ipvlan"
  int parent_index = 0;
  std::string name;   ///< its name in the target namespace
  std::string mac;    ///< "" = the kernel picks (macvlan) or the parent's (ipvlan, passthru)
  uint32_t mtu = 0;   ///< 0 = the parent's
  uint32_t mode = 0;  ///< IFLA_MACVLAN_MODE (MACVLAN_MODE_*) or IFLA_IPVLAN_MODE (IPVLAN_MODE_*)
  std::vector<std::string> source_macs;  ///< macvlan mode source: the accepted senders
};

/// The kinds of link AddChildLink makes.
inline bool IsChildKind(std::string_view kind) { return kind == "macvlan" || kind == "ipvlan"; }
/// The kinds IsChildKind accepts, for messages.
inline constexpr const char* kChildKindList = "\"macvlan\" or \"ipvlan\"";

struct AddrInfo {
  int ifindex = 0;
  IpPrefix local;  ///< address with its prefix length
  uint8_t scope = kScopeUniverse;
  uint32_t flags = 0;                  ///< IFA_F_* (only the settable ones matter)
  std::optional<IpAddress> broadcast;  ///< IPv4 only

  bool operator==(const AddrInfo&) const = default;
};

/// One leg of a multipath route (RTA_MULTIPATH).
struct Nexthop {
  std::optional<IpAddress> gateway;
  int oif = 0;
  uint32_t weight = 1;  ///< as `ip route` shows it (1..256): the kernel's rtnh_hops + 1

  bool operator==(const Nexthop&) const = default;
};

struct RouteInfo {
  IpPrefix dst;  ///< len 0 = default route; family from dst.addr
  /// A single-path route's nexthop. Of a multipath route: the leg through the
  /// link ListRoutes(oif) was asked for, else the first leg.
  std::optional<IpAddress> gateway;
  std::optional<IpAddress> prefsrc;
  int oif = 0;
  /// Every leg of a multipath route (two or more); empty for a single path.
  std::vector<Nexthop> nexthops;
  uint32_t table = kTableMain;
  uint32_t metric = 0;
  uint8_t scope = kScopeUniverse;
  uint8_t protocol = kProtoStatic;
  uint8_t type = 1;  ///< RTN_UNICAST

  int family() const { return dst.addr.family; }
  bool operator==(const RouteInfo&) const = default;
};

struct RuleInfo {
  int family = 0;  ///< AF_INET or AF_INET6
  uint32_t priority = 0;
  std::optional<IpPrefix> src;  ///< `from` selector; nullopt = all
  uint32_t table = kTableMain;

  bool operator==(const RuleInfo&) const = default;
};

/// rtnetlink verbs for one network namespace. Errors carry Code::kKernel, the
/// errno in sys_errno and the kernel's extended ACK text in details. Callers
/// test sys_errno (EEXIST, ENODEV, ESRCH, ENOENT) to make undo idempotent.
class Kernel {
 public:
  virtual ~Kernel() = default;

  /// An fd of the namespace this handle speaks to (for IFLA_NET_NS_FD).
  virtual int NetnsFd() const = 0;
  /// The namespace's cookie (SO_NETNS_COOKIE of the socket this handle
  /// speaks on, Linux 5.14); 0 when it cannot be told.
  virtual uint64_t NetnsCookie() const { return 0; }

  virtual Result<std::vector<LinkInfo>> ListLinks() = 0;
  /// nullopt when no link has that name / index.
  virtual Result<std::optional<LinkInfo>> FindLink(std::string_view name) = 0;
  virtual Result<std::optional<LinkInfo>> FindLinkByIndex(int index) = 0;

  /// One RTM_NEWLINK carrying IFLA_NET_NS_FD and IFLA_IFNAME: the link leaves this namespace and appears in
  /// `target` under `new_name`, atomically. `link` is the link as the caller last read it: its index is
  /// moved, and its name and MAC find it in `target` should the kernel half do the move (it is then moved
  /// back).
  virtual Status MoveLink(const LinkInfo& link, const Kernel& target, std::string_view new_name) = 0;
  /// The same for a link known by its index only: reads it first (ENODEV when it is not here).
  Status MoveLink(int index, const Kernel& target, std::string_view new_name);
  virtual Status RenameLink(int index, std::string_view new_name) = 0;
  virtual Status SetMtu(int index, uint32_t mtu) = 0;
  virtual Status SetUp(int index, bool up) = 0;
  /// The link's hardware address (IFLA_ADDRESS), "aa:bb:cc:dd:ee:ff". Many
  /// drivers refuse it while the link is up (EBUSY).
  virtual Status SetMac(int index, std::string_view mac) = 0;
  /// One RTM_NEWLINK (CREATE|EXCL) on this namespace, whose link is the parent, carrying IFLA_NET_NS_FD: the
  /// child is born in `target` under its final name, with no rename and no moment on the node.
  virtual Status AddChildLink(const ChildLinkSpec& spec, const Kernel& target) = 0;
  /// RTM_DELLINK. ENODEV when there is no such link.
  virtual Status DeleteLink(int index) = 0;

  /// Addresses of one link (index > 0) or of all links (0), both families.
  virtual Result<std::vector<AddrInfo>> ListAddrs(int index) = 0;
  virtual Status AddAddr(const AddrInfo& addr) = 0;
  virtual Status DelAddr(const AddrInfo& addr) = 0;

  /// Routes of every table, both families; oif > 0 keeps only routes through
  /// it (a multipath route when one of its legs is).
  virtual Result<std::vector<RouteInfo>> ListRoutes(int oif) = 0;
  /// Routes of one table, both families. The real kernel filters the dump itself (strict checking); this
  /// default reads every table and keeps the one.
  virtual Result<std::vector<RouteInfo>> ListTableRoutes(uint32_t table) {
    auto all = ListRoutes(0);
    if (all.ok()) std::erase_if(*all, [table](const RouteInfo& r) { return r.table != table; });
    return all;
  }
  /// NLM_F_CREATE | NLM_F_EXCL: EEXIST when the table already has a route of
  /// that dst and metric, whatever its nexthop.
  virtual Status AddRoute(const RouteInfo& route) = 0;
  /// NLM_F_CREATE | NLM_F_APPEND (`ip route append`): next to the routes of
  /// the same dst and metric (IPv4: another route; IPv6 with a gateway:
  /// another leg of their multipath route). EEXIST only for an identical one.
  virtual Status AppendRoute(const RouteInfo& route) = 0;
  virtual Status DelRoute(const RouteInfo& route) = 0;

  virtual Result<std::vector<RuleInfo>> ListRules() = 0;
  virtual Status AddRule(const RuleInfo& rule) = 0;
  virtual Status DelRule(const RuleInfo& rule) = 0;
};

inline Status Kernel::MoveLink(int index, const Kernel& target, std::string_view new_name) {
  ASSIGN_OR_RETURN(std::optional<LinkInfo> link, FindLinkByIndex(index));
  if (!link)
    return base::Error(base::Code::kKernel,
                       "RTM_NEWLINK dev " + std::to_string(index) + " to netns fd " +
                           std::to_string(target.NetnsFd()) + " as " + std::string(new_name) + ": " +
                           std::strerror(ENODEV),
                       {}, ENODEV);
  return MoveLink(*link, target, new_name);
}

}  // namespace netlink
