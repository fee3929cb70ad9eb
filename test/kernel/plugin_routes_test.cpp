// DEL puts the node's routes back exactly as ADD found them, on a node whose
// routes through the device share their destination and metric with other
// devices' (appended routes, multipath routes), in both families.
//
// What the kernel does when the device leaves for the pod (Linux 6.x):
//  - an IPv4 route through it goes; one appended at the same destination and
//    metric through another device stays;
//  - an IPv4 multipath route with a leg through it goes whole, every leg
//    (fib_sync_down_dev on NETDEV_UNREGISTER);
//  - of an IPv6 multipath route only the leg through it goes (each leg is a
//    route of its own, a sibling); the others stay.
// An exclusive add of the device's route then meets EEXIST from whatever holds
// that destination and metric, which is not the route DEL must put back.
#include <algorithm>
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_routes_test {

using nlohmann::json;

namespace {

// The node with two ENIs; `setup` (ip commands, one a line, in the node)
// reshapes their routes before the reference snapshot is taken.
struct TwoEnis {
  kt::Topology t{{.enis = 2, .pods = 1, .ipv6 = true}};
  std::string cid = t.ContainerId("routes");
  json config = kt::PluginConfig(
      {.device = "eth2", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});

  void Node(const std::string& ip_args) const { kt::ShOk("ip -n " + t.node() + " " + ip_args); }

  kt::PluginResult Add() const {
    kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
    INFO("ADD: " << kt::Describe(add));
    REQUIRE(add.exit == 0);
    REQUIRE_FALSE(kt::LinkExists(t.node(), "eth2"));
    return add;
  }

  void Del(const kt::PluginResult& add) const {
    kt::PluginResult del =
        kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json)));
    INFO("DEL: " << kt::Describe(del));
    CHECK(del.exit == 0);
    CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  }
};

}  // namespace

TEST_CASE(
    "a node with appended default routes at one metric keeps them all after ADD and DEL of the second device",
    "[routes]") {
  TwoEnis n;
  // eth2's default routes move to eth1's metric, appended after eth1's: IPv4
  // keeps two routes, IPv6 makes them one multipath route.
  n.Node("route del default dev eth2 metric 201");
  n.Node("route append default via 10.9.0.1 dev eth2 metric 200");
  n.Node("-6 route del default dev eth2 metric 201");
  n.Node("-6 route append default via fd00:9::1 dev eth2 metric 200");
  REQUIRE(kt::Routes(n.t.node(), "main", 4).dump().find("\"dev\":\"eth2\"") != std::string::npos);
  const std::string before = kt::StableSnapshot(n.t.node());

  kt::PluginResult add = n.Add();
  // The kernel took eth2's routes with it; eth1's stayed.
  CHECK(kt::Routes(n.t.node(), "main", 4).dump().find("eth2") == std::string::npos);
  CHECK(kt::Routes(n.t.node(), "main", 6).dump().find("eth2") == std::string::npos);
  n.Del(add);
  CHECK(kt::SettledDiff(before, n.t.node()) == "");
}

TEST_CASE("DEL puts back a multipath route the kernel removed whole when one leg's device left", "[routes]") {
  TwoEnis n;
  // eth2 is the second leg of one route and the first of another; the kernel
  // drops both whole, eth1's legs included.
  n.Node("route add 198.51.100.0/24 nexthop via 10.9.0.1 dev eth1 nexthop via 10.9.0.1 dev eth2 weight 3");
  n.Node(
      "route add 203.0.113.0/24 metric 7 nexthop via 10.9.0.1 dev eth2 weight 2 nexthop via 10.9.0.1 dev "
      "eth1");
  const std::string before = kt::StableSnapshot(n.t.node());

  kt::PluginResult add = n.Add();
  CHECK(kt::Routes(n.t.node(), "main", 4).dump().find("198.51.100.0") == std::string::npos);
  n.Del(add);
  CHECK(kt::SettledDiff(before, n.t.node()) == "");
}

TEST_CASE("DEL puts back the IPv6 multipath leg through the device next to the legs that stayed",
          "[routes]") {
  TwoEnis n;
  n.Node(
      "-6 route add 2001:db8:77::/48 metric 50 nexthop via fd00:9::1 dev eth1 nexthop via fd00:9::1 dev "
      "eth2");
  const std::string before = kt::StableSnapshot(n.t.node());

  kt::PluginResult add = n.Add();
  // Only eth2's leg left: eth1's is a single-path route now.
  CHECK(kt::Routes(n.t.node(), "main", 6).dump().find("2001:db8:77::/48") != std::string::npos);
  n.Del(add);
  CHECK(kt::SettledDiff(before, n.t.node()) == "");
}

TEST_CASE("a route the node gained at the device's destination and metric is not taken for the device's own",
          "[routes]") {
  TwoEnis n;
  const std::string before = kt::StableSnapshot(n.t.node());
  kt::PluginResult add = n.Add();

  // While eth2 is in the pod, the node gets routes at eth2's destinations and
  // metric through eth1: EEXIST for eth2's own, which DEL must still put back.
  n.Node("route add default via 10.9.0.1 dev eth1 metric 201");
  n.Node("-6 route add default via fd00:9::1 dev eth1 metric 201");
  n.Del(add);

  // IPv4: nothing of before is missing; the one line more is the gained route.
  const std::string diff4 = kt::SettledDiff(before, n.t.node(), "route6 ");
  INFO(diff4);
  CHECK(diff4.find("- ") == std::string::npos);
  CHECK(std::count(diff4.begin(), diff4.end(), '\n') == 1);
  // IPv6: eth2's default route is back as a leg next to the gained one.
  bool both = false;
  for (const json& r : kt::Routes(n.t.node(), "main", 6)) {
    if (r.value("dst", "") != "default" || r.value("metric", 0) != 201) continue;
    const std::string legs = r.value("nexthops", json::array()).dump();
    both = legs.find("\"eth1\"") != std::string::npos && legs.find("\"eth2\"") != std::string::npos;
  }
  CHECK(both);
}

}  // namespace test_kernel_plugin_routes_test
