// Bad inputs: each gives the spec's error JSON with the right code and a
// message naming the culprit, and leaves the topology and the data dir untouched.
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_errors_test {

using nlohmann::json;

namespace {

struct BadInput {
  std::string what;
  int code;
  std::vector<std::string> msg_any;                    ///< the message names one of these
  std::function<void(kt::PluginCall&, json&)> mutate;  ///< edits the call and/or the config
  bool raw_stdin = false;                              ///< mutate sets call.stdin_text itself
};

}  // namespace

TEST_CASE("bad inputs give the right error code and leave the node and the pod and the data dir untouched") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  const std::string not_a_netns = t.tmp() + "/not-a-netns";
  std::ofstream(not_a_netns) << "plain file\n";

  const std::vector<BadInput> cases = {
      {"malformed JSON", 6, {}, [](kt::PluginCall& c, json&) { c.stdin_text = "{\"cniVersion\": "; }, true},
      {"stdin is a JSON array", 6, {}, [](kt::PluginCall& c, json&) { c.stdin_text = "[]"; }, true},
      {"empty stdin", 6, {}, [](kt::PluginCall& c, json&) { c.stdin_text = ""; }, true},
      {"mtu of the wrong type", 7, {"mtu"}, [](kt::PluginCall&, json& j) { j["mtu"] = "big"; }},
      {"rule priority out of range",
       7,
       {"routing.rulePriority"},
       [](kt::PluginCall&, json& j) {
         j["routing"] = {{"rulePriority", 99999}};
       }},
      {"unknown mode", 7, {"mode"}, [](kt::PluginCall&, json& j) { j["mode"] = "teleport"; }},
      {"unknown addresses value",
       7,
       {"addresses"},
       [](kt::PluginCall&, json& j) { j["addresses"] = "copy"; }},
      {"device of the wrong type", 7, {"device"}, [](kt::PluginCall&, json& j) { j["device"] = "eth1"; }},
      {"missing CNI_COMMAND", 4, {"CNI_COMMAND"}, [](kt::PluginCall& c, json&) { c.command = ""; }},
      {"ADD without CNI_NETNS", 4, {"CNI_NETNS"}, [](kt::PluginCall& c, json&) { c.netns = std::nullopt; }},
      {"CNI_NETNS is a regular file",
       4,
       {"CNI_NETNS", "not-a-netns"},
       [&](kt::PluginCall& c, json&) { c.netns = not_a_netns; }},
      {"device not found",
       100,
       {"nope0"},
       [](kt::PluginCall&, json& j) {
         j["device"] = {{"name", "nope0"}};
       }},
      {"unsupported cniVersion",
       1,
       {"0.2.0", "cniVersion"},
       [](kt::PluginCall&, json& j) { j["cniVersion"] = "0.2.0"; }},
  };

  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  for (const auto& bad : cases) {
    INFO("case: " << bad.what);
    const std::string cid = t.ContainerId("bad");
    json config = kt::PluginConfig(
        {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
    kt::PluginCall call = kt::Call(t, "ADD", cid, "net1", config);
    bad.mutate(call, config);
    if (!bad.raw_stdin) call.stdin_text = config.dump();
    kt::PluginResult r = kt::RunPlugin(call);
    kt::CheckError(r, bad.code, bad.msg_any);
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
    CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
    CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  }
}

TEST_CASE("a device held by one container is refused to another with code 11 naming the holder") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 2});
  const std::string first = t.ContainerId("first");
  const std::string second = t.ContainerId("second");
  json config = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", first, "net1", config, 0));
  INFO("first ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const std::string node_held = kt::StableSnapshot(t.node());
  const std::string pod0_held = kt::StableSnapshot(t.pod(0));
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));

  kt::PluginResult clash = kt::RunPlugin(kt::Call(t, "ADD", second, "net1", config, 1));
  kt::CheckError(clash, 11, {first});
  CHECK(kt::SettledDiff(node_held, t.node()) == "");
  CHECK(kt::SettledDiff(pod0_held, t.pod(0)) == "");
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", second, "net1")));

  // The runtime cleans up the failed sandbox with a DEL: it must not take
  // the device from the container that holds it.
  kt::PluginResult loser_del = kt::RunPlugin(kt::Call(t, "DEL", second, "net1", config, 1));
  INFO("DEL of the refused container: " << kt::Describe(loser_del));
  CHECK(loser_del.exit == 0);
  CHECK(kt::SettledDiff(pod0_held, t.pod(0)) == "");
  CHECK(kt::SettledDiff(node_held, t.node()) == "");
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", first, "net1")));

  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", first, "net1", kt::AsRuntimeWouldForDel(config, add.json), 0));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

}  // namespace test_kernel_plugin_errors_test
