// VERSION for every cniVersion; GC and STATUS, which exist from 1.1.0 on.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_version_gc_test {

using nlohmann::json;

TEST_CASE("VERSION prints every supported spec version") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::PluginCall call;
  call.command = "VERSION";
  call.stdin_text = json{{"cniVersion", version}}.dump();
  kt::PluginResult r = kt::RunPlugin(call);
  INFO(kt::Describe(r));
  REQUIRE(r.exit == 0);
  REQUIRE(r.json.is_object());
  REQUIRE(r.json.value("supportedVersions", json()).is_array());
  std::vector<std::string> got = r.json["supportedVersions"].get<std::vector<std::string>>();
  std::sort(got.begin(), got.end());
  CHECK(got == kt::kVersions);
  REQUIRE(r.json.value("cniVersion", json()).is_string());
  const std::string reported = r.json["cniVersion"];
  CHECK(std::find(kt::kVersions.begin(), kt::kVersions.end(), reported) != kt::kVersions.end());
}

TEST_CASE("GC returns the devices of attachments missing from valid-attachments and keeps the rest") {
  const std::string version = "1.1.0";  // GC exists from 1.1.0 on
  kt::Topology t({.enis = 2, .pods = 2});
  const std::string keep = t.ContainerId("keep");
  const std::string drop = t.ContainerId("drop");
  auto config_for = [&](const std::string& dev) {
    return kt::PluginConfig({.cni_version = version,
                             .device = dev,
                             .data_dir = t.DataDir(),
                             .log_file = t.LogFile(),
                             .addresses = "inherit"});
  };
  const json config1 = config_for("eth1");
  const json config2 = config_for("eth2");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));

  kt::PluginResult add1 = kt::RunPlugin(kt::Call(t, "ADD", keep, "net1", config1, 0));
  INFO("ADD keep: " << kt::Describe(add1));
  REQUIRE(add1.exit == 0);
  kt::PluginResult add2 = kt::RunPlugin(kt::Call(t, "ADD", drop, "net1", config2, 1));
  INFO("ADD drop: " << kt::Describe(add2));
  REQUIRE(add2.exit == 0);
  REQUIRE_FALSE(kt::LinkExists(t.node(), "eth2"));
  const std::string pod0_held = kt::StableSnapshot(t.pod(0));

  json gc_config = config1;
  gc_config["cni.dev/valid-attachments"] = json::array({{{"containerID", keep}, {"ifname", "net1"}}});
  kt::PluginResult r = kt::RunPlugin(kt::Gc(t, gc_config));
  INFO("GC: " << kt::Describe(r));
  CHECK(r.exit == 0);
  CHECK(r.out.empty());

  // The dropped attachment: its device home with its name, address and routes; its state gone.
  CHECK(kt::LinkExists(t.node(), "eth2"));
  CHECK(kt::SettledDiff(node_before, t.node(), "\"eth1\"") == "");
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", drop, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), drop).empty());

  // The kept one: untouched.
  CHECK(kt::SettledDiff(pod0_held, t.pod(0)) == "");
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", keep, "net1")));
  json del_config = kt::AsRuntimeWouldForDel(config1, add1.json);
  kt::PluginResult check = kt::RunPlugin(kt::Call(t, "CHECK", keep, "net1", del_config, 0));
  INFO("CHECK keep: " << kt::Describe(check));
  CHECK(check.exit == 0);

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", keep, "net1", del_config, 0));
  INFO("DEL keep: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("STATUS answers whether the plugin can serve an ADD") {
  kt::Topology t;
  auto status = [&](const json& config) {
    kt::PluginCall call;
    call.command = "STATUS";
    call.stdin_text = config.dump();
    call.run_in = t.node();
    return kt::RunPlugin(call);
  };
  kt::ConfigSpec spec{.cni_version = "1.1.0", .data_dir = t.DataDir(), .log_file = t.LogFile()};

  SECTION("ready when the data dir is writable and the device is present") {
    kt::PluginResult r = status(kt::PluginConfig(spec));
    INFO(kt::Describe(r));
    CHECK(r.exit == 0);
    CHECK(r.out.empty());
  }
  SECTION("not available (50) when the device is absent") {
    spec.device = "nope0";
    kt::CheckError(status(kt::PluginConfig(spec)), 50, {"nope0"});
  }
  SECTION("not available (50) when the data dir cannot be created") {
    const std::string file = t.tmp() + "/a-file";
    std::ofstream(file) << "x";
    spec.data_dir = file + "/data";
    kt::CheckError(status(kt::PluginConfig(spec)), 50, {"dataDir", file});
  }
}

TEST_CASE("GC releases the IPAM lease of an attachment it removes, as that attachment's IPAM ADD took it") {
  kt::Topology t({.enis = 1});
  const json ipam = {{"type", "host-local"},     {"subnet", kt::kSubnet4},   {"rangeStart", "10.9.0.100"},
                     {"rangeEnd", "10.9.0.120"}, {"gateway", kt::kGateway4}, {"dataDir", t.tmp() + "/ipam"}};
  const json config = kt::PluginConfig(
      {.cni_version = "1.1.0", .data_dir = t.DataDir(), .log_file = t.LogFile(), .ipam = ipam});
  const std::string cid = t.ContainerId("leased");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const std::string lease = t.tmp() + "/ipam/erdma-test/10.9.0.100";
  REQUIRE(kt::FileExists(lease));
  json gc = config;
  gc["cni.dev/valid-attachments"] = json::array();
  kt::PluginResult r = kt::RunPlugin(kt::Gc(t, gc));
  INFO("GC: " << kt::Describe(r));
  CHECK(r.exit == 0);
  CHECK_FALSE(kt::FileExists(lease));
  CHECK(kt::LinkExists(t.node(), t.eni(1).name));
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

TEST_CASE("GC without cni.dev/valid-attachments changes nothing and fails with code 7 naming the key") {
  kt::Topology t({.enis = 1});
  const json config = kt::PluginConfig(
      {.cni_version = "1.1.0", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  const std::string cid = t.ContainerId("live");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const std::string node_held = kt::StableSnapshot(t.node());
  const std::string pod_held = kt::StableSnapshot(t.pod());

  kt::PluginResult r = kt::RunPlugin(kt::Gc(t, config));
  INFO("GC without the list: " << kt::Describe(r));
  kt::CheckError(r, 7, {"cni.dev/valid-attachments"});
  REQUIRE(r.json.is_object());
  CHECK_THAT(r.json.value("msg", "") + r.json.value("details", ""),
             Catch::Contains("mandatory") && Catch::Contains("[]"));
  CHECK(kt::SettledDiff(node_held, t.node()) == "");
  CHECK(kt::SettledDiff(pod_held, t.pod()) == "");
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK_FALSE(kt::ClaimsFor(t.DataDir(), cid).empty());

  // An empty list is the runtime saying none is valid: the attachment goes.
  json gc = config;
  gc["cni.dev/valid-attachments"] = json::array();
  kt::PluginResult none = kt::RunPlugin(kt::Gc(t, gc));
  INFO("GC with []: " << kt::Describe(none));
  CHECK(none.exit == 0);
  CHECK(kt::LinkExists(t.node(), t.eni(1).name));
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

}  // namespace test_kernel_plugin_version_gc_test
