// netlink::OpenRtnl against the real kernel: addresses, routes and rules, in
// private namespaces; iproute2 (`ip -j`) is the independent witness.
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "test/kernel/rtnl_fixture.h"

namespace test_kernel_rtnl_routing_test {

namespace {

using netlink::AddrInfo;
using netlink::RouteInfo;
using netlink::RuleInfo;
using nlohmann::json;
using rt_test::Addressed;
using rt_test::Contains;
using rt_test::IfIndex;
using rt_test::Ip;
using rt_test::Prefix;
using rt_test::TwoNamespaces;

}  // namespace

TEST_CASE("an address added with NOPREFIXROUTE leaves no prefix route", "[rtnl][addr]") {
  Addressed t;
  AddrInfo bare{t.va, Prefix("10.5.0.2/24"), netlink::kScopeUniverse, netlink::kAddrFlagNoPrefixRoute,
                std::nullopt};
  REQUIRE_OK(t.ka->AddAddr(bare));
  CHECK(t.a.Json("route show table main 10.5.0.0/24").empty());
  // The control: the same kind of address without the flag brings its route.
  AddrInfo routed{t.va, Prefix("10.6.0.2/24"), netlink::kScopeUniverse, 0, std::nullopt};
  REQUIRE_OK(t.ka->AddAddr(routed));
  CHECK(t.a.Json("route show table main 10.6.0.0/24").size() == 1);

  auto addrs = t.ka->ListAddrs(t.va);
  REQUIRE_OK(addrs);
  CHECK(Contains(*addrs, bare));
  CHECK(Contains(*addrs, routed));
  for (const AddrInfo& a : *addrs) CHECK(a.ifindex == t.va);
}

TEST_CASE("IPv6 addresses with NODAD and a broadcast IPv4 address list back as added", "[rtnl][addr]") {
  Addressed t;
  AddrInfo v6{t.va, Prefix("fd00:7::2/64"), netlink::kScopeUniverse,
              netlink::kAddrFlagNoDad | netlink::kAddrFlagNoPrefixRoute, std::nullopt};
  AddrInfo v4{t.va, Prefix("10.7.0.2/24"), netlink::kScopeUniverse, 0, Ip("10.7.0.255")};
  REQUIRE_OK(t.ka->AddAddr(v6));
  REQUIRE_OK(t.ka->AddAddr(v4));
  const json ip6 = t.a.Json("-6 addr show dev va")[0]["addr_info"];
  bool seen = false;
  for (const json& a : ip6) {
    if (a["local"] == "fd00:7::2") {
      seen = true;
      CHECK(a.value("nodad", false));
      CHECK(a.value("noprefixroute", false));
    }
  }
  CHECK(seen);
  CHECK(t.a.Ip("-4 addr show dev va").find("brd 10.7.0.255") != std::string::npos);

  auto all = t.ka->ListAddrs(0);
  REQUIRE_OK(all);
  CHECK(Contains(*all, v6));
  CHECK(Contains(*all, v4));
  // ListAddrs(0) covers every link: lo's 127.0.0.1 is there too.
  const int lo = IfIndex(t.a, "lo");
  CHECK(std::any_of(all->begin(), all->end(), [&](const AddrInfo& a) {
    return a.ifindex == lo && a.local == Prefix("127.0.0.1/8") && a.scope == netlink::kScopeHost;
  }));
}

TEST_CASE("adding an address twice fails with EEXIST and the kernel's explanation", "[rtnl][addr][extack]") {
  Addressed t;
  AddrInfo addr{t.va, Prefix("10.1.0.2/24"), netlink::kScopeUniverse, 0, std::nullopt};
  auto st = t.ka->AddAddr(addr);  // Addressed already put it there
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().code == base::Code::kKernel);
  CHECK(st.error().sys_errno == EEXIST);
  CHECK(st.error().msg == "RTM_NEWADDR 10.1.0.2/24 dev " + std::to_string(t.va) + ": File exists");
  CHECK_THAT(st.error().details, Catch::Contains("Address already assigned"));
}

TEST_CASE("deleting addresses works once and then fails with EADDRNOTAVAIL", "[rtnl][addr]") {
  Addressed t;
  for (const char* text : {"10.1.0.2/24", "fd00:1::2/64"}) {
    AddrInfo addr{t.va, Prefix(text), netlink::kScopeUniverse, 0, std::nullopt};
    REQUIRE_OK(t.ka->DelAddr(addr));
    auto again = t.ka->DelAddr(addr);
    REQUIRE_FALSE(again.ok());
    CHECK(again.error().sys_errno == EADDRNOTAVAIL);
  }
  CHECK(t.a.Json("addr show dev va")[0]["addr_info"].size() <= 1);  // at most fe80::
  CHECK(t.a.Ip("addr show dev va").find("10.1.0.2") == std::string::npos);
}

TEST_CASE("adding an address to a missing link fails with ENODEV and the kernel's reason",
          "[rtnl][addr][extack]") {
  TwoNamespaces t;
  AddrInfo v4{987654, Prefix("10.1.0.2/24"), netlink::kScopeUniverse, 0, std::nullopt};
  auto st = t.ka->AddAddr(v4);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == ENODEV);
  CHECK_THAT(st.error().details, Catch::Contains("Device not found"));
  AddrInfo v6{987654, Prefix("fd00:1::2/64"), netlink::kScopeUniverse, 0, std::nullopt};
  st = t.ka->AddAddr(v6);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == ENODEV);
  CHECK_FALSE(st.error().details.empty());
}

TEST_CASE("routes of every table are listed, table 200 and the local table included", "[rtnl][route]") {
  Addressed t;
  t.a.Ip("route add 10.2.0.0/24 via 10.1.0.1 dev va table 200 metric 50");
  t.a.Ip("-6 route add fd00:2::/64 via fd00:1::1 dev va table 200 metric 60");
  auto routes = t.ka->ListRoutes(0);
  REQUIRE_OK(routes);

  RouteInfo v4;
  v4.dst = Prefix("10.2.0.0/24");
  v4.gateway = Ip("10.1.0.1");
  v4.oif = t.va;
  v4.table = 200;
  v4.metric = 50;
  v4.protocol = netlink::kProtoBoot;
  CHECK(Contains(*routes, v4));
  RouteInfo v6 = v4;
  v6.dst = Prefix("fd00:2::/64");
  v6.gateway = Ip("fd00:1::1");
  v6.metric = 60;
  CHECK(Contains(*routes, v6));

  RouteInfo local;
  local.dst = Prefix("10.1.0.2/32");
  local.prefsrc = Ip("10.1.0.2");
  local.oif = t.va;
  local.table = netlink::kTableLocal;
  local.scope = netlink::kScopeHost;
  local.protocol = netlink::kProtoKernel;
  local.type = RTN_LOCAL;
  CHECK(Contains(*routes, local));

  RouteInfo prefix;
  prefix.dst = Prefix("10.1.0.0/24");
  prefix.prefsrc = Ip("10.1.0.2");
  prefix.oif = t.va;
  prefix.scope = netlink::kScopeLink;
  prefix.protocol = netlink::kProtoKernel;
  CHECK(Contains(*routes, prefix));

  // As many as iproute2 sees in all tables of both families.
  const size_t ip_count =
      t.a.Json("-4 route show table all").size() + t.a.Json("-6 route show table all").size();
  CHECK(routes->size() == ip_count);

  auto through_vb = t.ka->ListRoutes(t.vb);
  REQUIRE_OK(through_vb);
  for (const RouteInfo& r : *through_vb) CHECK(r.oif == t.vb);
  auto through_va = t.ka->ListRoutes(t.va);
  REQUIRE_OK(through_va);
  CHECK(Contains(*through_va, v4));
  CHECK(Contains(*through_va, local));
}

TEST_CASE("one device's routes and addresses, filtered by the kernel, are the whole dump's share of it",
          "[rtnl][route][addr]") {
  Addressed t;
  auto all_routes = t.ka->ListRoutes(0);
  auto all_addrs = t.ka->ListAddrs(0);
  REQUIRE_OK(all_routes);
  REQUIRE_OK(all_addrs);
  for (const int dev : {t.va, t.vb}) {
    auto routes = t.ka->ListRoutes(dev);
    auto addrs = t.ka->ListAddrs(dev);
    REQUIRE_OK(routes);
    REQUIRE_OK(addrs);
    const auto share = std::count_if(all_routes->begin(), all_routes->end(),
                                     [&](const RouteInfo& r) { return r.oif == dev; });
    CHECK(static_cast<long>(routes->size()) == share);
    for (const RouteInfo& r : *routes) CHECK(Contains(*all_routes, r));
    const auto addr_share = std::count_if(all_addrs->begin(), all_addrs->end(),
                                          [&](const AddrInfo& a) { return a.ifindex == dev; });
    CHECK(static_cast<long>(addrs->size()) == addr_share);
    for (const AddrInfo& a : *addrs) CHECK(Contains(*all_addrs, a));
  }
  CHECK_FALSE(t.ka->ListRoutes(t.va)->empty());
  CHECK_FALSE(t.ka->ListAddrs(t.va)->empty());
  // An index no device has: the kernel's filter answers ENODEV; the caller
  // gets what a filtered dump of all devices gives, nothing.
  constexpr int kNoDevice = 0x7ffffff0;
  auto none_routes = t.ka->ListRoutes(kNoDevice);
  auto none_addrs = t.ka->ListAddrs(kNoDevice);
  REQUIRE_OK(none_routes);
  REQUIRE_OK(none_addrs);
  CHECK(none_routes->empty());
  CHECK(none_addrs->empty());
}

TEST_CASE("one table's routes, filtered by the kernel, are the whole dump's share of it, table 1000 included",
          "[rtnl][route]") {
  Addressed t;
  t.a.Ip("route add default via 10.1.0.1 dev va metric 300");
  t.a.Ip("route add 10.2.0.0/24 via 10.1.0.1 dev va table 200");
  t.a.Ip("route add 10.3.0.0/24 via 10.1.0.1 dev va table 1000");
  t.a.Ip("-6 route add fd00:3::/64 via fd00:1::1 dev va table 1000");
  auto all = t.ka->ListRoutes(0);
  REQUIRE_OK(all);
  for (const uint32_t table : {netlink::kTableMain, netlink::kTableLocal, uint32_t{200}, uint32_t{1000}}) {
    auto routes = t.ka->ListTableRoutes(table);
    REQUIRE_OK(routes);
    const auto share =
        std::count_if(all->begin(), all->end(), [&](const RouteInfo& r) { return r.table == table; });
    CHECK(static_cast<long>(routes->size()) == share);
    CHECK_FALSE(routes->empty());
    for (const RouteInfo& r : *routes) {
      CHECK(r.table == table);
      CHECK(Contains(*all, r));
    }
  }
  // As many as iproute2 sees in main, both families.
  CHECK(t.ka->ListTableRoutes(netlink::kTableMain)->size() ==
        t.a.Json("-4 route show table main").size() + t.a.Json("-6 route show table main").size());
  CHECK(t.ka->ListTableRoutes(4000)->empty());
}

TEST_CASE("a route in table 200 is added once, then EEXIST, and deleted by its identity", "[rtnl][route]") {
  Addressed t;
  RouteInfo r;
  r.dst = Prefix("10.3.0.0/24");
  r.gateway = Ip("10.1.0.1");
  r.oif = t.va;
  r.table = 200;
  r.metric = 100;
  r.prefsrc = Ip("10.1.0.2");
  REQUIRE_OK(t.ka->AddRoute(r));
  const json ip = t.a.Json("route show table 200");
  REQUIRE(ip.size() == 1);
  CHECK(ip[0]["dst"] == "10.3.0.0/24");
  CHECK(ip[0]["gateway"] == "10.1.0.1");
  CHECK(ip[0]["metric"] == 100);
  CHECK(ip[0]["protocol"] == "static");
  CHECK(ip[0]["prefsrc"] == "10.1.0.2");

  auto routes = t.ka->ListRoutes(t.va);
  REQUIRE_OK(routes);
  CHECK(Contains(*routes, r));

  auto dup = t.ka->AddRoute(r);
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error().sys_errno == EEXIST);

  RouteInfo wrong_table = r;
  wrong_table.table = 201;
  auto miss = t.ka->DelRoute(wrong_table);
  REQUIRE_FALSE(miss.ok());
  CHECK(miss.error().sys_errno == ESRCH);
  RouteInfo wrong_metric = r;
  wrong_metric.metric = 101;
  CHECK(t.ka->DelRoute(wrong_metric).error().sys_errno == ESRCH);
  RouteInfo wrong_gateway = r;
  wrong_gateway.gateway = Ip("10.1.0.9");
  CHECK(t.ka->DelRoute(wrong_gateway).error().sys_errno == ESRCH);
  CHECK(t.a.Json("route show table 200").size() == 1);

  REQUIRE_OK(t.ka->DelRoute(r));
  CHECK(t.a.Json("route show table 200").empty());
  auto again = t.ka->DelRoute(r);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().sys_errno == ESRCH);
}

TEST_CASE("IPv6 routes and default routes are added and deleted in table 200", "[rtnl][route]") {
  Addressed t;
  RouteInfo v6;
  v6.dst = Prefix("fd00:3::/64");
  v6.gateway = Ip("fd00:1::1");
  v6.oif = t.va;
  v6.table = 200;
  v6.metric = 100;
  RouteInfo def;
  def.dst = Prefix("0.0.0.0/0");
  def.gateway = Ip("10.1.0.1");
  def.oif = t.va;
  def.table = 200;
  REQUIRE_OK(t.ka->AddRoute(v6));
  REQUIRE_OK(t.ka->AddRoute(def));
  auto routes = t.ka->ListRoutes(t.va);
  REQUIRE_OK(routes);
  CHECK(Contains(*routes, v6));
  CHECK(Contains(*routes, def));
  CHECK(t.a.Json("-6 route show table 200").size() == 1);
  CHECK(t.a.Json("-4 route show table 200")[0]["dst"] == "default");

  REQUIRE_OK(t.ka->DelRoute(v6));
  REQUIRE_OK(t.ka->DelRoute(def));
  CHECK(t.a.Json("-6 route show table 200").empty());
  CHECK(t.a.Json("-4 route show table 200").empty());
  CHECK(t.ka->DelRoute(v6).error().sys_errno == ESRCH);
}

TEST_CASE("a route through an unreachable gateway fails with the kernel's reason", "[rtnl][route][extack]") {
  Addressed t;
  RouteInfo r;
  r.dst = Prefix("10.4.0.0/24");
  r.gateway = Ip("192.0.2.1");  // not on any link of the namespace
  r.oif = t.va;
  r.table = 200;
  auto st = t.ka->AddRoute(r);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().sys_errno == ENETUNREACH);
  CHECK_THAT(st.error().details, Catch::Contains("Nexthop has invalid gateway"));
}

TEST_CASE("rules at priority 200 are added, listed and deleted", "[rtnl][rule]") {
  Addressed t;
  RuleInfo v4{AF_INET, 200, Prefix("10.1.0.2/32"), 200};
  RuleInfo v6{AF_INET6, 200, Prefix("fd00:1::2/128"), 200};
  REQUIRE_OK(t.ka->AddRule(v4));
  REQUIRE_OK(t.ka->AddRule(v6));

  const json ip4 = t.a.Json("-4 rule show priority 200");
  REQUIRE(ip4.size() == 1);
  CHECK(ip4[0]["src"] == "10.1.0.2");
  CHECK(ip4[0]["table"] == "200");
  CHECK(t.a.Json("-6 rule show priority 200").size() == 1);

  auto rules = t.ka->ListRules();
  REQUIRE_OK(rules);
  CHECK(Contains(*rules, v4));
  CHECK(Contains(*rules, v6));

  auto dup = t.ka->AddRule(v4);
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.error().sys_errno == EEXIST);
  CHECK(t.a.Json("-4 rule show priority 200").size() == 1);

  REQUIRE_OK(t.ka->DelRule(v4));
  REQUIRE_OK(t.ka->DelRule(v6));
  CHECK(t.a.Json("-4 rule show priority 200").empty());
  CHECK(t.a.Json("-6 rule show priority 200").empty());
  auto again = t.ka->DelRule(v4);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().sys_errno == ENOENT);
}

TEST_CASE("the kernel's default rules are listed for both families", "[rtnl][rule]") {
  TwoNamespaces t;
  auto rules = t.ka->ListRules();
  REQUIRE_OK(rules);
  auto has = [&](int family, uint32_t prio, uint32_t table) {
    return std::find(rules->begin(), rules->end(), RuleInfo{family, prio, std::nullopt, table}) !=
           rules->end();
  };
  CHECK(has(AF_INET, 0, netlink::kTableLocal));
  CHECK(has(AF_INET, 32766, netlink::kTableMain));
  CHECK(has(AF_INET, 32767, 253));
  CHECK(has(AF_INET6, 0, netlink::kTableLocal));
  CHECK(has(AF_INET6, 32766, netlink::kTableMain));
  CHECK(rules->size() == t.a.Json("-4 rule show").size() + t.a.Json("-6 rule show").size());
}

}  // namespace test_kernel_rtnl_routing_test
