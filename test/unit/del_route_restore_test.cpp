// DEL puts the node's routes back next to other devices' routes of the same
// destination and metric, on the fake node (test/kernel/plugin_routes_test.cpp
// does it on the real kernel, multipath routes included).
#include "cni/driver/registry.h"
#include "test/unit/fake_node.h"

namespace test_unit_del_route_restore_test {

using namespace fakenode;

namespace {

// eth2 on the node with its default route appended after eth1's, at eth1's
// metric: an exclusive add of it meets EEXIST from eth1's.
struct AppendedNode : Node {
  int eth2 = AddEni("eth2", "00:16:3e:10:f8:b1", "10.9.0.20/24", 201, /*append_default=*/true);
  AppendedNode() { world.ClearCalls(); }
  conf::Config Eth2() {
    auto cfg = conf::Parse(
        cni::Modes(), R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","device":{"name":"eth2"},)"
                      R"("dataDir":")" +
                          dir.path + "\"}");
    REQUIRE(cfg.ok());
    return *cfg;
  }
};

}  // namespace

TEST_CASE("DEL puts back a default route that was appended next to another device's at the same metric",
          "[engine][routes]") {
  AppendedNode n;
  auto before = n.world.Snapshot();
  auto cfg = n.Eth2();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK_FALSE(HasRoute(n.world, fake::World::kRoot, "10.9.0.0/24", netlink::kTableMain, 201));
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK(n.StateFiles().empty());
}

TEST_CASE("DEL of an appended route that fails at any kernel call keeps the state and a retry restores it",
          "[engine][routes][rollback]") {
  int total = 0;
  {
    AppendedNode n;
    auto cfg = n.Eth2();
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    n.world.ClearCalls();
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    total = n.world.mutating_calls();
  }
  REQUIRE(total >= 3);
  for (int fail = 1; fail <= total; ++fail) {
    INFO("failing DEL's mutating call " << fail << " of " << total);
    AppendedNode n;
    auto before = n.world.Snapshot();
    auto cfg = n.Eth2();
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    n.world.FailCall(fail);
    CHECK_FALSE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK_FALSE(n.StateFiles().empty());
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  }
}

TEST_CASE("DEL puts back a multipath route without its leg through a device that left the node meanwhile",
          "[engine][routes]") {
  AppendedNode n;
  netlink::RouteInfo multi;
  multi.dst = P("203.0.113.0/24");
  multi.oif = n.eth1;
  multi.gateway = A("10.9.0.1");
  multi.metric = 7;
  multi.protocol = netlink::kProtoBoot;
  multi.nexthops = {{A("10.9.0.1"), n.eth1, 1}, {A("10.9.0.1"), n.eth2, 3}};
  REQUIRE(n.host->AddRoute(multi).ok());
  auto cfg = n.Eth2();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  // The kernel dropped the route whole with eth2; now eth1 leaves too.
  CHECK_FALSE(HasRoute(n.world, fake::World::kRoot, "203.0.113.0/24", netlink::kTableMain, 7));
  n.world.DestroyLink(n.eth1);

  // DEL finishes (it is not stuck until eth1 returns) and eth2's leg is back.
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.StateFiles().empty());
  auto routes = n.host->ListRoutes(n.eth2);
  REQUIRE(routes.ok());
  bool back = false;
  for (const auto& r : *routes)
    back = back || (r.dst == P("203.0.113.0/24") && r.metric == 7 && r.nexthops.empty() &&
                    r.gateway == A("10.9.0.1"));
  CHECK(back);
}

}  // namespace test_unit_del_route_restore_test
