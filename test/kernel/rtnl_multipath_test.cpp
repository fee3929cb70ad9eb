// Routes that share a destination and metric on the real kernel: multipath
// routes listed and added with every leg, appended routes, and restoring a
// device's recorded routes next to what holds their destination and metric.
// iproute2 (`ip -j`) is the independent witness.
#include <sys/socket.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>

#include "cni/journal/route_restore.h"
#include "test/kernel/rtnl_fixture.h"

namespace test_kernel_rtnl_multipath_test {

namespace {

using netlink::Nexthop;
using netlink::RouteInfo;
using nlohmann::json;
using rt_test::Ip;
using rt_test::Prefix;

/// Addressed, with vb in va's IPv4 and IPv6 subnets too: a gateway
/// (10.1.0.1, fd00:1::1) reachable through either link.
struct TwoLegs : rt_test::Addressed {
  TwoLegs() {
    a.Ip("addr add 10.1.0.3/24 dev vb");
    a.Ip("addr add fd00:1::3/64 dev vb nodad");
  }

  RouteInfo Via(const std::string& dst, const std::string& gw, int oif, uint32_t metric) const {
    RouteInfo r;
    r.dst = Prefix(dst);
    r.gateway = Ip(gw);
    r.oif = oif;
    r.metric = metric;
    r.protocol = netlink::kProtoBoot;
    return r;
  }

  /// The routes of `dst` in main as iproute2 shows them.
  json Shown(const std::string& dst, int family = 4) const {
    return a.Json("-" + std::to_string(family) + " route show table main " + dst);
  }
};

const RouteInfo* Find(const std::vector<RouteInfo>& routes, const std::string& dst) {
  auto it =
      std::find_if(routes.begin(), routes.end(), [&](const RouteInfo& r) { return r.dst == Prefix(dst); });
  return it == routes.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("a multipath route lists with every leg and its weight, through either leg's device as that leg",
          "[rtnl][route][multipath]") {
  TwoLegs t;
  t.a.Ip("route add 198.51.100.0/24 nexthop via 10.1.0.1 dev va nexthop via 10.1.0.1 dev vb weight 3");
  const std::vector<Nexthop> legs = {{Ip("10.1.0.1"), t.va, 1}, {Ip("10.1.0.1"), t.vb, 3}};
  for (int through : {t.va, t.vb}) {
    auto routes = t.ka->ListRoutes(through);
    REQUIRE_OK(routes);
    const RouteInfo* r = Find(*routes, "198.51.100.0/24");
    REQUIRE(r != nullptr);
    CHECK(r->nexthops == legs);
    CHECK(r->oif == through);
    CHECK(r->gateway == Ip("10.1.0.1"));
  }
  // A single-path route has no legs.
  auto all = t.ka->ListRoutes(0);
  REQUIRE_OK(all);
  const RouteInfo* single = Find(*all, "10.1.0.0/24");
  REQUIRE(single != nullptr);
  CHECK(single->nexthops.empty());
}

TEST_CASE("AddRoute adds a multipath route that iproute2 shows with its legs and lists back as added",
          "[rtnl][route][multipath]") {
  TwoLegs t;
  RouteInfo r = t.Via("203.0.113.0/24", "10.1.0.1", t.vb, 7);
  r.nexthops = {{Ip("10.1.0.1"), t.vb, 2}, {Ip("10.1.0.1"), t.va, 1}};
  REQUIRE_OK(t.ka->AddRoute(r));
  const json shown = t.Shown("203.0.113.0/24");
  REQUIRE(shown.size() == 1);
  const json legs = shown[0].value("nexthops", json::array());
  REQUIRE(legs.size() == 2);
  CHECK(legs[0].value("dev", "") == "vb");
  CHECK(legs[0].value("weight", 0) == 2);
  CHECK(legs[1].value("dev", "") == "va");

  auto listed = t.ka->ListRoutes(t.vb);
  REQUIRE_OK(listed);
  const RouteInfo* back = Find(*listed, "203.0.113.0/24");
  REQUIRE(back != nullptr);
  CHECK(cni::RouteHolds(*back, r));
}

TEST_CASE(
    "AppendRoute puts a route next to another device's at its destination and metric, where AddRoute meets "
    "EEXIST",
    "[rtnl][route]") {
  TwoLegs t;
  REQUIRE_OK(t.ka->AddRoute(t.Via("0.0.0.0/0", "10.1.0.1", t.va, 100)));
  REQUIRE_OK(t.ka->AddRoute(t.Via("::/0", "fd00:1::1", t.va, 100)));
  const RouteInfo v4 = t.Via("0.0.0.0/0", "10.1.0.1", t.vb, 100);
  const RouteInfo v6 = t.Via("::/0", "fd00:1::1", t.vb, 100);
  for (const RouteInfo* r : {&v4, &v6}) {
    auto excl = t.ka->AddRoute(*r);
    REQUIRE_FALSE(excl.ok());
    CHECK(excl.error().sys_errno == EEXIST);
    REQUIRE_OK(t.ka->AppendRoute(*r));
    // An identical one is refused.
    auto again = t.ka->AppendRoute(*r);
    REQUIRE_FALSE(again.ok());
    CHECK(again.error().sys_errno == EEXIST);
  }
  // IPv4: two routes; IPv6: one route with two legs.
  CHECK(t.Shown("default", 4).size() == 2);
  const json six = t.Shown("default", 6);
  REQUIRE(six.size() == 1);
  CHECK(six[0].value("nexthops", json::array()).size() == 2);
}

TEST_CASE("RestoreRoutes puts routes back next to other devices' at their destination and metric, once",
          "[rtnl][route][restore]") {
  TwoLegs t;
  // What holds the destinations and metrics while vb's routes are away.
  REQUIRE_OK(t.ka->AddRoute(t.Via("0.0.0.0/0", "10.1.0.1", t.va, 100)));
  REQUIRE_OK(t.ka->AddRoute(t.Via("2001:db8:77::/48", "fd00:1::1", t.va, 50)));
  // vb's recorded routes: an appended default route, and its leg of an IPv6
  // multipath route whose other leg (va's) stayed.
  RouteInfo v6 = t.Via("2001:db8:77::/48", "fd00:1::1", t.vb, 50);
  v6.nexthops = {{Ip("fd00:1::1"), t.va, 1}, {Ip("fd00:1::1"), t.vb, 1}};
  const std::vector<RouteInfo> recorded = {t.Via("0.0.0.0/0", "10.1.0.1", t.vb, 100), v6};

  REQUIRE_OK(cni::RestoreRoutes(recorded, t.vb, *t.ka));
  const json four = t.Shown("default", 4);
  CHECK(four.size() == 2);
  CHECK(four.dump().find("\"vb\"") != std::string::npos);
  const json six = t.Shown("2001:db8:77::/48", 6);
  REQUIRE(six.size() == 1);
  CHECK(six[0].value("nexthops", json::array()).size() == 2);

  // Run again (a DEL retried): everything is in place, nothing is added twice.
  const std::string once = t.a.Ip("-4 route show table main") + t.a.Ip("-6 route show table main");
  REQUIRE_OK(cni::RestoreRoutes(recorded, t.vb, *t.ka));
  CHECK(t.a.Ip("-4 route show table main") + t.a.Ip("-6 route show table main") == once);
}

}  // namespace test_kernel_rtnl_multipath_test
