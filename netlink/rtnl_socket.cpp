#include "netlink/rtnl_socket.h"

#include <fcntl.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <utility>

#include "netlink/libnl_ptr.h"
#include "netlink/netns_liveness.h"
#include "netlink/rtnl_convert.h"
#include "netlink/transport.h"

namespace netlink {
namespace {

using base::Error;

Error BuildError(const std::string& what, int err) {
  return Error(base::Code::kKernel, what + ": " + std::strerror(err), "building the request", err);
}

/// "aa:bb:cc:dd:ee:ff" as six bytes.
std::optional<std::array<uint8_t, 6>> ParseMac(const std::string& s) {
  std::array<uint8_t, 6> out{};
  unsigned b[6];
  char tail = 0;
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) !=
      6)
    return std::nullopt;
  for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(b[i]);
  return out;
}

/// A name no link can have: the kernel would refuse to look it up.
bool ImpossibleName(std::string_view name) {
  return name.empty() || name.size() >= IFNAMSIZ || name.find('\0') != std::string_view::npos;
}

/// An RTM_*LINK request (REQUEST|ACK and `nlflags`) whose ifinfomsg has the link's index and flag change.
Result<nl::MsgPtr> LinkRequest(const std::string& what, int type, int nlflags, int index, unsigned flags = 0,
                               unsigned change = 0) {
  nl::MsgPtr msg(nlmsg_alloc_simple(type, NLM_F_REQUEST | NLM_F_ACK | nlflags));
  if (!msg) return BuildError(what, ENOMEM);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = index;
  ifi.ifi_flags = flags;
  ifi.ifi_change = change;
  if (nlmsg_append(msg.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO) < 0) return BuildError(what, EMSGSIZE);
  return msg;
}

/// An NLM_F_DUMP request of `type` with `header` as its fixed part (all
/// zero but the family: every table, every link). Null when out of memory.
template <typename Header>
nl::MsgPtr DumpRequest(int type, Header header) {
  nl::MsgPtr msg(nlmsg_alloc_simple(type, NLM_F_REQUEST | NLM_F_DUMP));
  if (msg && nlmsg_append(msg.get(), &header, sizeof header, NLMSG_ALIGNTO) < 0) msg.reset();
  return msg;
}

class RtnlKernel final : public Kernel {
 public:
  RtnlKernel(Socket sock, base::UniqueFd netns) : sock_(std::move(sock)), netns_(std::move(netns)) {}

  int NetnsFd() const override { return netns_.get(); }
  uint64_t NetnsCookie() const override { return SocketNetnsCookie(nl_socket_get_fd(sock_.get())); }

  Result<std::vector<LinkInfo>> ListLinks() override {
    auto request = [] {
      nl::MsgPtr msg = DumpRequest(RTM_GETLINK, ifinfomsg{});
      if (msg && nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0) msg.reset();
      return msg;
    };
    return Collect<LinkInfo, rtnl_link>("RTM_GETLINK dump", request, RTM_NEWLINK, false,
                                        [](rtnl_link* l) { return std::optional(rtnl::ToLinkInfo(l)); });
  }

  Result<std::optional<LinkInfo>> FindLink(std::string_view name) override {
    if (ImpossibleName(name)) return std::optional<LinkInfo>();
    return GetLink(0, std::string(name), "RTM_GETLINK " + std::string(name));
  }

  Result<std::optional<LinkInfo>> FindLinkByIndex(int index) override {
    if (index <= 0) return std::optional<LinkInfo>();
    return GetLink(index, "", "RTM_GETLINK dev " + std::to_string(index));
  }

  using Kernel::MoveLink;
  Status MoveLink(const LinkInfo& link, const Kernel& target, std::string_view new_name) override {
    const std::string name(new_name);
    const std::string what = "RTM_NEWLINK dev " + std::to_string(link.index) + " to netns fd " +
                             std::to_string(target.NetnsFd()) + " as " + name;
    Status moved = SetMoveLink(what, link.index, target.NetnsFd(), name);
    if (moved.ok()) return moved;
    // Still here: the move failed whole. Gone: the kernel may have moved it
    // without the name; the caller's name and MAC find it there (MoveBack).
    ASSIGN_OR_RETURN(std::optional<LinkInfo> still_here, FindLinkByIndex(link.index));
    if (still_here) return moved;
    return MoveBack(target.NetnsFd(), link, name, std::move(moved).error());
  }

  Status RenameLink(int index, std::string_view new_name) override {
    const std::string name(new_name);
    return SetLink("RTM_NEWLINK dev " + std::to_string(index) + " name " + name, index, 0, 0,
                   [&](nl_msg* msg) { return nla_put_string(msg, IFLA_IFNAME, name.c_str()); });
  }

  Status SetMtu(int index, uint32_t mtu) override {
    return SetLink("RTM_NEWLINK dev " + std::to_string(index) + " mtu " + std::to_string(mtu), index, 0, 0,
                   [&](nl_msg* msg) { return nla_put_u32(msg, IFLA_MTU, mtu); });
  }

  Status SetUp(int index, bool up) override {
    return SetLink("RTM_NEWLINK dev " + std::to_string(index) + (up ? " up" : " down"), index,
                   up ? IFF_UP : 0, IFF_UP, nullptr);
  }

  Status SetMac(int index, std::string_view mac) override {
    const std::string text(mac);
    const std::string what = "RTM_NEWLINK dev " + std::to_string(index) + " address " + text;
    auto bytes = ParseMac(text);
    if (!bytes) return BuildError(what, EINVAL);
    return SetLink(what, index, 0, 0,
                   [&](nl_msg* msg) { return nla_put(msg, IFLA_ADDRESS, bytes->size(), bytes->data()); });
  }

  Status AddChildLink(const ChildLinkSpec& spec, const Kernel& target) override {
    const std::string what = "RTM_NEWLINK " + spec.kind + " " + spec.name + " on dev " +
                             std::to_string(spec.parent_index) + " in netns fd " +
                             std::to_string(target.NetnsFd());
    if (ImpossibleName(spec.name) || !IsChildKind(spec.kind)) return BuildError(what, EINVAL);
    std::optional<std::array<uint8_t, 6>> mac;
    if (!spec.mac.empty()) {
      mac = ParseMac(spec.mac);
      if (!mac) return BuildError(what, EINVAL);
    }
    std::vector<std::array<uint8_t, 6>> sources;
    for (const auto& m : spec.source_macs) {
      auto parsed = ParseMac(m);
      if (!parsed) return BuildError(what, EINVAL);
      sources.push_back(*parsed);
    }
    ASSIGN_OR_RETURN(nl::MsgPtr msg, LinkRequest(what, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0));
    nl_msg* m = msg.get();
    auto put = [&]() -> int {
      if (nla_put_string(m, IFLA_IFNAME, spec.name.c_str()) < 0 ||
          nla_put_u32(m, IFLA_LINK, static_cast<uint32_t>(spec.parent_index)) < 0 ||
          nla_put_u32(m, IFLA_NET_NS_FD, static_cast<uint32_t>(target.NetnsFd())) < 0)
        return -1;
      if (mac && nla_put(m, IFLA_ADDRESS, 6, mac->data()) < 0) return -1;
      if (spec.mtu && nla_put_u32(m, IFLA_MTU, spec.mtu) < 0) return -1;
      nlattr* info = nla_nest_start(m, IFLA_LINKINFO);
      if (!info || nla_put_string(m, IFLA_INFO_KIND, spec.kind.c_str()) < 0) return -1;
      nlattr* data = nla_nest_start(m, IFLA_INFO_DATA);
      if (!data) return -1;
      if (spec.kind == "ipvlan") {
        if (nla_put_u16(m, IFLA_IPVLAN_MODE, static_cast<uint16_t>(spec.mode)) < 0) return -1;
      } else {
        if (nla_put_u32(m, IFLA_MACVLAN_MODE, spec.mode) < 0) return -1;
        if (!sources.empty()) {
          if (nla_put_u32(m, IFLA_MACVLAN_MACADDR_MODE, MACVLAN_MACADDR_SET) < 0) return -1;
          nlattr* list = nla_nest_start(m, IFLA_MACVLAN_MACADDR_DATA);
          if (!list) return -1;
          for (const auto& src : sources)
            if (nla_put(m, IFLA_MACVLAN_MACADDR, 6, src.data()) < 0) return -1;
          nla_nest_end(m, list);
        }
      }
      nla_nest_end(m, data);
      nla_nest_end(m, info);
      return 0;
    };
    if (put() < 0) return BuildError(what, EMSGSIZE);
    return sock_.Request(what, std::move(msg));
  }

  Status DeleteLink(int index) override {
    const std::string what = "RTM_DELLINK dev " + std::to_string(index);
    ASSIGN_OR_RETURN(nl::MsgPtr msg, LinkRequest(what, RTM_DELLINK, 0, index));
    return sock_.Request(what, std::move(msg));
  }

  Result<std::vector<AddrInfo>> ListAddrs(int index) override {
    // ifa_index: the kernel's filter (strict checking, transport.cpp).
    auto request = [index] {
      ifaddrmsg ifa{};
      ifa.ifa_index = static_cast<uint32_t>(std::max(index, 0));
      return DumpRequest(RTM_GETADDR, ifa);
    };
    return Collect<AddrInfo, rtnl_addr>("RTM_GETADDR dump", request, RTM_NEWADDR, index > 0,
                                        [index](rtnl_addr* a) -> std::optional<AddrInfo> {
                                          if (index > 0 && rtnl_addr_get_ifindex(a) != index) return {};
                                          return rtnl::ToAddrInfo(a);
                                        });
  }

  Status AddAddr(const AddrInfo& addr) override {
    // Without NLM_F_EXCL IPv4 still answers EEXIST; say what we mean anyway.
    return RunOn("RTM_NEWADDR " + rtnl::Describe(addr), rtnl::MakeAddr(addr, false), &rtnl_addr_add,
                 NLM_F_EXCL);
  }

  Status DelAddr(const AddrInfo& addr) override {
    return RunOn("RTM_DELADDR " + rtnl::Describe(addr), rtnl::MakeAddr(addr, true), &rtnl_addr_delete, 0);
  }

  Result<std::vector<RouteInfo>> ListRoutes(int oif) override {
    // rtm_table 0, no RTM_F_CLONED: every table, no exception-cache entries. RTA_OIF: the kernel's filter,
    // which keeps a multipath route with a leg through the device, as the filter below does.
    return Routes(oif, std::nullopt);
  }

  Result<std::vector<RouteInfo>> ListTableRoutes(uint32_t table) override {
    // rtm_table and RTA_TABLE: the kernel dumps that table alone; the loop below drops any other.
    return Routes(0, table);
  }

  Status AddRoute(const RouteInfo& route) override {
    // rtnl_route_add adds NLM_F_CREATE itself.
    return RunOn("RTM_NEWROUTE " + rtnl::Describe(route), rtnl::MakeRoute(route, false), &rtnl_route_add,
                 NLM_F_EXCL);
  }

  Status AppendRoute(const RouteInfo& route) override {
    return RunOn("RTM_NEWROUTE (append) " + rtnl::Describe(route), rtnl::MakeRoute(route, false),
                 &rtnl_route_add, NLM_F_APPEND);
  }

  Status DelRoute(const RouteInfo& route) override {
    return RunOn("RTM_DELROUTE " + rtnl::Describe(route), rtnl::MakeRoute(route, true), &rtnl_route_delete,
                 0);
  }

  Result<std::vector<RuleInfo>> ListRules() override {
    return Collect<RuleInfo, rtnl_rule>(
        "RTM_GETRULE dump", [] { return DumpRequest(RTM_GETRULE, fib_rule_hdr{}); }, RTM_NEWRULE, false,
        &rtnl::ToRuleInfo);
  }

  Status AddRule(const RuleInfo& rule) override {
    // Without NLM_F_EXCL the kernel happily adds an identical second rule.
    return RunOn("RTM_NEWRULE " + rtnl::Describe(rule), rtnl::MakeRule(rule), &rtnl_rule_add, NLM_F_EXCL);
  }

  Status DelRule(const RuleInfo& rule) override {
    return RunOn("RTM_DELRULE " + rtnl::Describe(rule), rtnl::MakeRule(rule), &rtnl_rule_delete, 0);
  }

 private:
  /// A dump of `request`: `read` makes each object of message type `msgtype` (cast to the libnl type T) an
  /// entry of the list, or nothing. ENODEV when `device_filter` (the device filtered on is gone): no entries.
  template <typename Info, typename T, typename Read>
  Result<std::vector<Info>> Collect(const char* what, const std::function<nl::MsgPtr()>& request, int msgtype,
                                    bool device_filter, const Read& read) {
    auto objects = sock_.Dump(what, request);
    if (!objects.ok()) {
      if (device_filter && objects.error().sys_errno == ENODEV) return std::vector<Info>();
      return std::move(objects).error();
    }
    std::vector<Info> out;
    for (const nl::ObjectPtr& o : *objects) {
      if (nl_object_get_msgtype(o.get()) != msgtype) continue;
      if (std::optional<Info> info = read(reinterpret_cast<T*>(o.get()))) out.push_back(*info);
    }
    return out;
  }

  /// The routes through the device `oif` (when > 0), or of `table` alone (when set), as ListRoutes and
  /// ListTableRoutes ask for them. A PMTU or redirect exception is left out: the kernel's cache, not a route
  /// to restore.
  Result<std::vector<RouteInfo>> Routes(int oif, std::optional<uint32_t> table) {
    auto request = [&] {
      rtmsg rtm{};
      if (table)
        rtm.rtm_table =
            static_cast<unsigned char>(*table < 256 ? *table : static_cast<uint32_t>(RT_TABLE_UNSPEC));
      nl::MsgPtr msg = DumpRequest(RTM_GETROUTE, rtm);
      if (msg && oif > 0 && nla_put_u32(msg.get(), RTA_OIF, static_cast<uint32_t>(oif)) < 0) msg.reset();
      if (msg && table && nla_put_u32(msg.get(), RTA_TABLE, *table) < 0) msg.reset();
      return msg;
    };
    return Collect<RouteInfo, rtnl_route>("RTM_GETROUTE dump", request, RTM_NEWROUTE, oif > 0,
                                          [&](rtnl_route* r) -> std::optional<RouteInfo> {
                                            if (rtnl_route_get_flags(r) & RTM_F_CLONED) return {};
                                            auto info = rtnl::ToRouteInfo(r, oif);
                                            if (!info || (oif > 0 && info->oif != oif)) return {};
                                            if (table && info->table != *table) return {};
                                            return info;
                                          });
  }

  /// Sends the object `made` with libnl's `call` (rtnl_addr_add, rtnl_route_delete, ...) and `nlflags`.
  template <typename Ptr, typename T>
  Status RunOn(const std::string& what, Result<Ptr> made, int (*call)(nl_sock*, T*, int), int nlflags) {
    ASSIGN_OR_RETURN(Ptr obj, WithWhat(std::move(made), what));
    return sock_.Run(what, [&](nl_sock* sk) { return call(sk, obj.get(), nlflags); });
  }

  /// One RTM_GETLINK by index or name. Not rtnl_link_get_kernel: it swaps in its own error callback, which
  /// loses the errno and extack text, and asks for VF details nobody here reads.
  Result<std::optional<LinkInfo>> GetLink(int index, const std::string& name, const std::string& what) {
    ASSIGN_OR_RETURN(nl::MsgPtr msg, LinkRequest(what, RTM_GETLINK, 0, index));
    if ((!name.empty() && nla_put_string(msg.get(), IFLA_IFNAME, name.c_str()) < 0) ||
        nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS) < 0) {
      return BuildError(what, EMSGSIZE);
    }
    auto objects = sock_.Get(what, std::move(msg));
    if (!objects.ok()) {
      if (objects.error().sys_errno == ENODEV) return std::optional<LinkInfo>();
      return std::move(objects).error();
    }
    for (const nl::ObjectPtr& o : *objects) {
      if (nl_object_get_msgtype(o.get()) == RTM_NEWLINK)
        return std::optional(rtnl::ToLinkInfo(reinterpret_cast<rtnl_link*>(o.get())));
    }
    return std::optional<LinkInfo>();
  }

  /// RTM_NEWLINK with IFLA_NET_NS_FD, and IFLA_IFNAME when `name` is set,
  /// IFLA_NEW_IFINDEX when `new_index` is (kernels before 5.15 ignore it).
  Status SetMoveLink(const std::string& what, int index, int netns_fd, const std::string& name,
                     int new_index = 0) {
    return SetLink(what, index, 0, 0, [&](nl_msg* msg) {
      int err = nla_put_u32(msg, IFLA_NET_NS_FD, static_cast<uint32_t>(netns_fd));
      if (err >= 0 && !name.empty()) err = nla_put_string(msg, IFLA_IFNAME, name.c_str());
      if (err >= 0 && new_index > 0) err = nla_put_s32(msg, IFLA_NEW_IFINDEX, new_index);
      return err;
    });
  }

  /// The kernel renames a moved link in the target after the move, unless its name is taken there; when that
  /// rename fails the request fails with the link already moved. This puts it back (through a socket opened
  /// in the target), so a failed MoveLink leaves the link where it was. Returns `failure`, what happened
  /// added.
  Status MoveBack(int target_fd, const LinkInfo& before, const std::string& new_name, Error failure) {
    auto note = [&](const std::string& text) {
      failure.details += (failure.details.empty() ? "" : "; ") + text;
      return std::move(failure);
    };
    const std::string stranded = "the kernel moved the link but did not rename it; ";
    auto back = [&]() -> Status {
      ASSIGN_OR_RETURN(Netns ns,
                       Netns::Open("/proc/self/fd/" + std::to_string(target_fd), "the target namespace"));
      ASSIGN_OR_RETURN(Socket sock,
                       Socket::Open(ns, NETLINK_ROUTE, "opening an rtnetlink socket in " + ns.path()));
      RtnlKernel there(std::move(sock), base::UniqueFd());
      ASSIGN_OR_RETURN(std::vector<LinkInfo> links, there.ListLinks());
      const LinkInfo* found = nullptr;
      for (const LinkInfo& l : links) {
        if (l.mac != before.mac || (l.name != before.name && l.name != new_name)) continue;
        if (!found || l.index == before.index) found = &l;
      }
      if (!found) {
        return Error(base::Code::kKernel, "it is not in the target namespace either", {}, ENODEV);
      }
      const std::string back_what =
          "RTM_NEWLINK dev " + std::to_string(found->index) + " back as " + before.name;
      // The link may have been given another index over there; ask for its
      // old one back so callers holding the index still find it.
      Status st = there.SetMoveLink(back_what, found->index, netns_.get(), before.name, before.index);
      if (st.ok() || st.error().sys_errno == EEXIST) return st;
      return there.SetMoveLink(back_what, found->index, netns_.get(), before.name);
    }();
    if (back.ok()) return note(stranded + "it was moved back");
    return note(stranded + "moving it back failed (" + back.error().msg + ")");
  }

  /// One RTM_NEWLINK for an existing link (no NLM_F_CREATE): ifinfomsg with
  /// the index and flag change, then whatever attributes `put` adds.
  Status SetLink(const std::string& what, int index, unsigned flags, unsigned change,
                 const std::function<int(nl_msg*)>& put) {
    ASSIGN_OR_RETURN(nl::MsgPtr msg, LinkRequest(what, RTM_NEWLINK, 0, index, flags, change));
    if (put && put(msg.get()) < 0) return BuildError(what, EMSGSIZE);
    return sock_.Request(what, std::move(msg));
  }

  Socket sock_;
  base::UniqueFd netns_;
};

}  // namespace

base::Result<std::unique_ptr<Kernel>> OpenRtnl(const Netns& ns) {
  ASSIGN_OR_RETURN(Netns copy, ns.Dup());
  return OpenRtnl(std::move(copy));
}

base::Result<std::unique_ptr<Kernel>> OpenRtnl(Netns&& ns) {
  ASSIGN_OR_RETURN(Socket sock,
                   Socket::Open(ns, NETLINK_ROUTE, "opening an rtnetlink socket in " + ns.path()));
  return std::unique_ptr<Kernel>(std::make_unique<RtnlKernel>(std::move(sock), std::move(ns).TakeFd()));
}

}  // namespace netlink
