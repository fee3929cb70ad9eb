// A config error never strands an attachment: an IPAM plugin that refuses
// its config is owed one DEL, and the rollback finishes whatever that DEL
// answers; a clash of names inside the pod is the config's to fix (code 7),
// not a retry's.
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"
#include "test/kernel/skip.h"

namespace test_kernel_plugin_config_errors_test {

using nlohmann::json;

TEST_CASE(
    "an IPAM plugin that refuses its config leaves no state and no share, and DEL and a later move "
    "of the parent succeed") {
  kt::Topology t;
  const std::string cid = t.ContainerId("noipam");
  // host-local without a subnet: its ADD and its DEL both fail ("no IP ranges specified").
  json bad = kt::PluginConfig({.device = t.eni(1).name,
                               .data_dir = t.DataDir(),
                               .log_file = t.LogFile(),
                               .ipam = json{{"type", "host-local"}, {"dataDir", t.tmp() + "/ipam"}}});
  bad["mode"] = "macvlan";
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", bad));
  INFO("ADD: " << kt::Describe(add));
  // The IPAM plugin's error (104), not "rollback incomplete" (102).
  kt::CheckError(add, 104, {"host-local"});
  CHECK(kt::StateFiles(t.DataDir()).empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  CHECK(kt::SettledDiff(node_before, t.node()).empty());
  CHECK(kt::SettledDiff(pod_before, t.pod()).empty());

  // The runtime's DEL after a failed ADD, with the same bad config.
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", bad));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);

  // Nothing blocks the parent: another pod may take it whole.
  json move = kt::PluginConfig({.device = t.eni(1).name, .data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string other = t.ContainerId("move");
  kt::PluginResult moved = kt::RunPlugin(kt::Call(t, "ADD", other, "net1", move));
  INFO("move ADD: " << kt::Describe(moved));
  REQUIRE(moved.exit == 0);
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", other, "net1", kt::AsRuntimeWouldForDel(move, moved.json))).exit ==
          0);
  CHECK(kt::SettledDiff(node_before, t.node()).empty());
}

TEST_CASE(
    "a group member named after an attachment the pod already has is code 7 naming it, and changes "
    "nothing") {
  kt::Topology t({.enis = 3});
  const std::string cid = t.ContainerId("clash");
  json one = kt::PluginConfig(
      {.device = t.eni(3).name, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  // Its subnet route in main at a metric of its own: the group's first
  // member, in the same subnet, takes 200.
  one["routing"] = {{"routeMetric", 300}};
  kt::PluginResult net2 = kt::RunPlugin(kt::Call(t, "ADD", cid, "net2", one));
  INFO("ADD net2: " << kt::Describe(net2));
  REQUIRE(net2.exit == 0);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  json group = kt::PluginConfig(
      {.device = "", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  group["device"] = {{"pool", {{"names", {t.eni(1).name, t.eni(2).name}}}}, {"count", 2}};
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", group));
  INFO("ADD group: " << kt::Describe(add));
  kt::CheckError(add, 7, {"net2"});
  CHECK(add.json.value("msg", "").find("already attachment") != std::string::npos);
  CHECK(kt::SettledDiff(node_before, t.node()).empty());
  CHECK(kt::SettledDiff(pod_before, t.pod()).empty());

  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", cid, "net2", kt::AsRuntimeWouldForDel(one, net2.json))).exit == 0);
}

}  // namespace test_kernel_plugin_config_errors_test
