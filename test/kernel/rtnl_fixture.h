// Shared pieces of the netlink kernel tests: kernel handles on scratch
// namespaces, and the small topologies the tests start from.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "netlink/netns.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/rtnl_socket.h"
#include "test/kernel/require_ok.h"
#include "test/kernel/scratch_netns.h"

/// REQUIREs a Status/Result to be ok, showing the error and its details if not.
namespace rt_test {

/// A kernel handle on `ns`. The Netns is closed on return: the Kernel keeps its own fd.
inline std::unique_ptr<netlink::Kernel> OpenKernel(const ScratchNetns& ns) {
  auto netns = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE_OK(netns);
  auto k = netlink::OpenRtnl(*netns);
  REQUIRE_OK(k);
  return std::move(k).value();
}

inline netlink::IpAddress Ip(const std::string& text) {
  auto a = netlink::IpAddress::Parse(text);
  REQUIRE(a);
  return *a;
}

inline netlink::IpPrefix Prefix(const std::string& text) {
  auto p = netlink::IpPrefix::Parse(text);
  REQUIRE(p);
  return *p;
}

/// The ifindex iproute2 shows for `dev` in `ns`.
inline int IfIndex(const ScratchNetns& ns, const std::string& dev) {
  nlohmann::json j = ns.Json("link show dev " + dev);
  REQUIRE(j.size() == 1);
  return j[0]["ifindex"].get<int>();
}

inline bool HasLink(const ScratchNetns& ns, const std::string& dev) {
  return ns.TryIp("link show dev " + dev).exit == 0;
}

template <typename T>
bool Contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// Two namespaces, a veth pair va/vb in the first, a kernel handle on each.
struct TwoNamespaces {
  ScratchNetns a, b;
  std::unique_ptr<netlink::Kernel> ka, kb;
  int va = 0, vb = 0;

  TwoNamespaces() {
    a.Ip("link add va type veth peer name vb");
    va = IfIndex(a, "va");
    vb = IfIndex(a, "vb");
    ka = OpenKernel(a);
    kb = OpenKernel(b);
  }
};

/// va and vb up, va with 10.1.0.2/24 and fd00:1::2/64 (no DAD: usable at once).
struct Addressed : TwoNamespaces {
  Addressed() {
    a.Ip("link set vb up");
    a.Ip("link set va up");
    a.Ip("addr add 10.1.0.2/24 dev va");
    a.Ip("addr add fd00:1::2/64 dev va nodad");
  }
};

}  // namespace rt_test
