// DEL in the shapes runtimes really send: after the netns is gone, with an
// empty CNI_NETNS, without prevResult, twice.
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_del_test {

using nlohmann::json;

TEST_CASE("DEL succeeds and removes the state after the pod netns was deleted", "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  const std::string cid = t.ContainerId("gone");
  json config = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));

  // A veth is virtual: deleting the netns destroys it (a physical ENI would
  // fall back to the init netns instead, which this topology cannot show).
  const std::string pod_path = t.PodPath();
  t.DeletePod();
  json del_config = kt::AsRuntimeWouldForDel(config, add.json);
  kt::PluginCall del_call = kt::Call(t, "DEL", cid, "net1", del_config);
  del_call.netns = pod_path;  // the path the runtime remembers, now dangling
  kt::PluginResult del = kt::RunPlugin(del_call);
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  // The node differs from before only by the destroyed device.
  CHECK(kt::SettledDiff(node_before, t.node(), "\"eth1\"") == "");
  // The log says what happened to it, once: gone with the netns, not "back on the node".
  const std::string log = kt::ShOk("cat " + t.LogFile());
  CHECK(log.find("a virtual device dies with its netns") != std::string::npos);
  CHECK(log.find("is back on the node") == std::string::npos);
  CHECK(log.find("detached: eth1 did not come back") != std::string::npos);

  kt::PluginResult again = kt::RunPlugin(del_call);
  INFO("second DEL: " << kt::Describe(again));
  CHECK(again.exit == 0);
}

TEST_CASE("a second DEL with an empty CNI_NETNS and no prevResult succeeds after a normal DEL") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 1, .primary = true});
  const std::string cid = t.ContainerId("twice");
  json base = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  json config = base;
  config["prevResult"] = kt::TerwayPrevResult(version, cid);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "eth0", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);

  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", kt::AsRuntimeWouldForDel(base, add.json)));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");

  // containerd's shape once the sandbox is gone: CNI_NETNS set but empty,
  // the plain config without prevResult.
  kt::PluginCall second = kt::Call(t, "DEL", cid, "eth0", base);
  second.netns = "";
  kt::PluginResult del2 = kt::RunPlugin(second);
  INFO("second DEL: " << kt::Describe(del2));
  CHECK(del2.exit == 0);
  CHECK(del2.out.empty());
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

TEST_CASE("DEL without any state is a successful no-op") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  json config = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", t.ContainerId("never"), "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(del.out.empty());
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
}

TEST_CASE("DEL with a dangling CNI_NETNS brings the device home from the netns recorded at ADD") {
  kt::Topology t;
  const std::string cid = t.ContainerId("dangling");
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);

  // The runtime names a path that no longer exists (e.g. /proc/<pid>/ns/net
  // of a dead pause process) while the netns recorded at ADD still holds
  // the device.
  kt::PluginCall del_call = kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json));
  del_call.netns = "/proc/2147483646/ns/net";
  kt::PluginResult del = kt::RunPlugin(del_call);
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

}  // namespace test_kernel_plugin_del_test
