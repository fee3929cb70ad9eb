// A device shared by macvlan children and a mode that takes the whole device:
// the kernel lets move mode take a parent from under other pods' children
// (they are left on a device in another netns), so children record a share of
// their parent and move mode refuses such a parent with code 11. The real
// binary, Debian's host-local and the real kernel.
#include <catch2/catch.hpp>
#include <filesystem>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_share_test {

using nlohmann::json;

namespace {

json MacvlanConfig(const kt::Topology& t) {
  kt::ConfigSpec spec{.name = "erdma-macvlan",
                      .data_dir = t.DataDir(),
                      .log_file = t.LogFile(),
                      .ipam = json{{"type", "host-local"},
                                   {"subnet", kt::kSubnet4},
                                   {"rangeStart", "10.9.0.100"},
                                   {"rangeEnd", "10.9.0.140"},
                                   {"gateway", kt::kGateway4},
                                   {"dataDir", t.tmp() + "/ipam"}}};
  spec.extra = {{"mode", "macvlan"}, {"macvlan", {{"mode", "bridge"}}}};
  return kt::PluginConfig(spec);
}

json MoveConfig(const kt::Topology& t) {
  return kt::PluginConfig(
      {.name = "erdma-move", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
}

std::string IpOf(const json& result) {
  const std::string cidr = result["ips"][0].value("address", "");
  return cidr.substr(0, cidr.find('/'));
}

std::vector<std::string> Shares(const kt::Topology& t) { return kt::StateFiles(t.DataDir() + "/children"); }

}  // namespace

TEST_CASE(
    "move mode refuses (code 11) a parent that another pod's macvlan child hangs from, and takes it once "
    "the child is deleted") {
  kt::Topology t({.enis = 1, .pods = 2});
  const kt::Eni& eni = t.eni(1);
  const std::string child_cid = t.ContainerId("child"), move_cid = t.ContainerId("mover");
  json child_config = MacvlanConfig(t), move_config = MoveConfig(t);
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginResult child = kt::RunPlugin(kt::Call(t, "ADD", child_cid, "net1", child_config, 0));
  INFO("child ADD: " << kt::Describe(child));
  REQUIRE(child.exit == 0);
  REQUIRE(kt::ClaimsFor(t.DataDir(), child_cid).size() == 1);  // its share of eth1
  CHECK(Shares(t).size() == 1);

  const std::string node_mid = kt::StableSnapshot(t.node());
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));
  kt::PluginResult move = kt::RunPlugin(kt::Call(t, "ADD", move_cid, "net1", move_config, 1));
  INFO("move ADD: " << kt::Describe(move));
  kt::CheckError(move, 11, {"is the parent of child links"});
  const std::string msg = move.json.value("msg", "");
  CHECK(msg.find(eni.name) != std::string::npos);
  CHECK(msg.find(child_cid) != std::string::npos);
  CHECK(msg.find("erdma-macvlan") != std::string::npos);
  // Nothing changed: the ENI is on the node, the second pod is empty, the
  // refused ADD left no state or claim, and the child still reaches the VPC.
  CHECK(kt::SettledDiff(node_mid, t.node()) == "");
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-move").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), move_cid).empty());
  CHECK(kt::StateFiles(t.DataDir() + "/devices").empty());
  CHECK(kt::Ping(t.pod(0), IpOf(child.json), kt::kGateway4).exit == 0);

  // diag on the node says who holds eth1, and how.
  kt::ShResult diag = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() +
                             " diag --json --data-dir " + t.DataDir());
  json holders = json::parse(diag.out, nullptr, false).value("holders", json());
  INFO("diag holders: " << holders.dump());
  REQUIRE(holders.is_array());
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].value("device", "") == eni.name);
  CHECK(holders[0].value("as", "") == "parent of a child");
  CHECK(holders[0].value("containerID", "") == child_cid);
  CHECK(holders[0].value("network", "") == "erdma-macvlan");
  CHECK_FALSE(holders[0].value("stale", true));
  kt::ShResult text =
      kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() + " diag --data-dir " + t.DataDir());
  CHECK(text.out.find(eni.name + ": parent of a child by container " + child_cid) != std::string::npos);

  kt::PluginResult del = kt::RunPlugin(
      kt::Call(t, "DEL", child_cid, "net1", kt::AsRuntimeWouldForDel(child_config, child.json), 0));
  INFO("child DEL: " << kt::Describe(del));
  REQUIRE(del.exit == 0);
  CHECK(Shares(t).empty());
  CHECK_FALSE(kt::FileExists(t.DataDir() + "/children/" + eni.name));

  kt::PluginResult moved = kt::RunPlugin(kt::Call(t, "ADD", move_cid, "net1", move_config, 1));
  INFO("move ADD after the child's DEL: " << kt::Describe(moved));
  REQUIRE(moved.exit == 0);
  kt::CheckAttached(t.pod(1), {.dev = "net1", .mac = eni.mac, .addr = eni.ip4});
  json moved_holders = json::parse(kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() +
                                          " diag --json --data-dir " + t.DataDir())
                                       .out,
                                   nullptr, false)
                           .value("holders", json());
  INFO("diag holders after the move: " << moved_holders.dump());
  REQUIRE(moved_holders.is_array());
  REQUIRE(moved_holders.size() == 1);
  CHECK(moved_holders[0].value("as", "") == "attached");
  CHECK(moved_holders[0].value("containerID", "") == move_cid);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", move_cid, "net1", move_config, 1)).exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir()).empty());
}

TEST_CASE("a macvlan child of a device another pod has moved is refused with code 11 naming that pod") {
  kt::Topology t({.enis = 1, .pods = 2});
  const std::string move_cid = t.ContainerId("owner"), child_cid = t.ContainerId("late");
  json move_config = MoveConfig(t), child_config = MacvlanConfig(t);
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", move_cid, "net1", move_config, 0)).exit == 0);
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));
  kt::PluginResult child = kt::RunPlugin(kt::Call(t, "ADD", child_cid, "net1", child_config, 1));
  INFO("child ADD: " << kt::Describe(child));
  kt::CheckError(child, 11, {move_cid});
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  CHECK(kt::ClaimsFor(t.DataDir(), child_cid).empty());
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-macvlan").empty());
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", move_cid, "net1", move_config, 0)).exit == 0);
  CHECK(kt::StateFiles(t.DataDir()).empty());
}

TEST_CASE("a share whose attachment's state is gone is stale: move mode takes the parent and GC sweeps it") {
  kt::Topology t({.enis = 1, .pods = 2});
  const std::string child_cid = t.ContainerId("gone"), move_cid = t.ContainerId("next");
  json child_config = MacvlanConfig(t), move_config = MoveConfig(t);
  kt::PluginResult child = kt::RunPlugin(kt::Call(t, "ADD", child_cid, "net1", child_config, 0));
  INFO("child ADD: " << kt::Describe(child));
  REQUIRE(child.exit == 0);
  REQUIRE(Shares(t).size() == 1);
  // The child is gone with its pod, and a DEL died between removing the
  // state and the share.
  kt::Sh("ip -n " + t.pod(0) + " link del net1");
  std::filesystem::remove(kt::StatePath(t.DataDir(), "erdma-macvlan", child_cid, "net1"));
  json holders =
      json::parse(kt::Sh(kt::PluginBinary() + " diag --json --data-dir " + t.DataDir()).out, nullptr, false)
          .value("holders", json());
  INFO("diag holders: " << holders.dump());
  REQUIRE(holders.is_array());
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].value("stale", false));

  SECTION("move mode") {
    kt::PluginResult move = kt::RunPlugin(kt::Call(t, "ADD", move_cid, "net1", move_config, 1));
    INFO("move ADD: " << kt::Describe(move));
    REQUIRE(move.exit == 0);
    CHECK(Shares(t).empty());
    CHECK(kt::RunPlugin(kt::Call(t, "DEL", move_cid, "net1", move_config, 1)).exit == 0);
  }
  SECTION("GC of any network in the data dir") {
    json gc = move_config;
    gc["cniVersion"] = "1.1.0";
    gc["cni.dev/valid-attachments"] = json::array();
    kt::PluginResult r = kt::RunPlugin(kt::Gc(t, gc));
    INFO("GC: " << kt::Describe(r));
    REQUIRE(r.exit == 0);
    CHECK(Shares(t).empty());
    CHECK_FALSE(kt::FileExists(t.DataDir() + "/children/" + t.eni(1).name));
  }
  (void)kt::RunPlugin(kt::Call(t, "DEL", child_cid, "net1", child_config, 0));
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-macvlan").empty());
  CHECK(kt::StateFiles(t.DataDir() + "/devices").empty());
}

}  // namespace test_kernel_plugin_share_test
