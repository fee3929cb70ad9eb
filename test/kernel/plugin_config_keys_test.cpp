// The config's keys end to end against the real binary: ADD refuses a key
// erdma-cni does not know before it touches the node, and DEL of a live
// attachment needs only the keys DEL uses.
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_config_keys_test {

using nlohmann::json;

TEST_CASE("ADD with a misspelt mode key is code 7 naming the key and leaves the node's device where it is") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  json config = kt::PluginConfig({.cni_version = version,
                                  .data_dir = t.DataDir(),
                                  .log_file = t.LogFile(),
                                  .extra = {{"mdoe", "ipvlan"}}});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string cid = t.ContainerId("mdoe");

  kt::PluginResult r = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(r));
  CHECK(r.exit != 0);
  kt::CheckError(r, 7, {"mdoe: not a key of erdma-cni; did you mean mode?"});
  CHECK(kt::LinkExists(t.node(), t.eni(1).name));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

TEST_CASE("DEL of a live attachment whose config now has an mtu string succeeds and puts the device back") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("mtu");
  json config = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE_FALSE(kt::LinkExists(t.node(), eni.name));

  // The NetworkAttachmentDefinition was edited after the pod started.
  json edited = config;
  edited["mtu"] = "9000";
  json del_config = kt::AsRuntimeWouldForDel(edited, add.json);
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(del.out.empty());
  CHECK(kt::LinkExists(t.node(), eni.name));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
  // The edited key is named in the log: DEL read the rest of its config once it found its state.
  CHECK(kt::Sh("grep -c 'DEL: ignored: mtu: must be an integer' " + t.LogFile()).out == "1\n");

  // ADD with the edited config is refused: only DEL lets it through.
  kt::PluginResult again = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("mtu2"), "net1", edited));
  kt::CheckError(again, 7, {"mtu: must be an integer"});
  CHECK(kt::LinkExists(t.node(), eni.name));
}

TEST_CASE("DEL of an attachment never made reads no more of its config than the keys that find a journal") {
  kt::Topology t;
  // A pod that passed through a chained entry, or whose ADD was refused: its DEL comes with a config whose
  // device block no longer parses. Nothing of the attachment exists, so nothing past its journal's keys is
  // read or warned about.
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["device"] = {{"name", "eth1"}, {"mac", "02:00:00:00:00:01"}};
  config["mtu"] = "9000";
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string cid = t.ContainerId("never");

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(del.out.empty());
  const std::string log = kt::Sh("cat " + t.LogFile()).out;
  INFO("log: " << log);
  CHECK(log.find("no state for this attachment: nothing to do") != std::string::npos);
  CHECK(log.find("ignored:") == std::string::npos);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");

  // Its journal's keys are still judged: a dataDir that is not absolute fails the DEL.
  config["dataDir"] = "run/erdma-cni";
  kt::PluginResult bad = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  kt::CheckError(bad, 7, {"dataDir: must be an absolute path"});
}

}  // namespace test_kernel_plugin_config_keys_test
