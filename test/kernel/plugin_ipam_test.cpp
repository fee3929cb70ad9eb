// Move mode with real IPAM plugins from Debian's containernetworking-plugins
// (/usr/lib/cni/host-local and static), found on CNI_PATH and delegated to.
// Those speak cniVersion up to 1.0.0; at 1.1.0 erdma-cni negotiates down
// (ipam/negotiate.h), so every version must work.
#include <catch2/catch.hpp>
#include <filesystem>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_ipam_test {

using nlohmann::json;

TEST_CASE("ADD with a real IPAM plugin gives the pod the IPAM address and DEL releases it", "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  const std::string kind = GENERATE(as<std::string>{}, "host-local", "static");
  CAPTURE(version, kind);
  if (!std::filesystem::exists("/usr/lib/cni/" + kind)) {
    FAIL("/usr/lib/cni/" << kind << " is missing: apt-get install containernetworking-plugins");
  }
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("ipam");
  const std::string lease_dir = t.tmp() + "/ipam/erdma-test";
  json ipam;
  std::string want;
  if (kind == "host-local") {
    ipam = {{"type", "host-local"},     {"subnet", kt::kSubnet4},   {"rangeStart", "10.9.0.100"},
            {"rangeEnd", "10.9.0.120"}, {"gateway", kt::kGateway4}, {"dataDir", t.tmp() + "/ipam"}};
    want = "10.9.0.100";
  } else {
    ipam = {{"type", "static"},
            {"addresses", json::array({{{"address", "10.9.0.150/24"}, {"gateway", kt::kGateway4}}})}};
    want = "10.9.0.150";
  }
  // No `addresses` key: an ipam object makes "ipam" the default.
  json config = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .ipam = ipam});

  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(add.json.is_object());
  const json& res = add.json;
  CHECK(res.value("cniVersion", "") == version);
  REQUIRE(res.value("interfaces", json::array()).size() == 1);
  CHECK(res["interfaces"][0].value("name", "") == "net1");
  json ip = kt::FindIp(res, want + "/24");
  INFO("result ips: " << res.value("ips", json()).dump());
  REQUIRE(ip.is_object());
  CHECK(ip.value("interface", -1) == 0);
  CHECK(ip.value("gateway", "") == kt::kGateway4);
  CHECK(kt::FindIp(res, eni.ip4 + "/24").is_null());

  // The pod holds the IPAM address only, not the ENI's node address.
  CHECK(kt::Addresses(t.pod(), "net1") == std::vector<std::string>{want + "/24"});
  kt::CheckAttached(t.pod(), {.dev = "net1", .mac = eni.mac, .addr = want});
  if (kind == "host-local") CHECK(kt::FileExists(lease_dir + "/" + want));

  json del_config = kt::AsRuntimeWouldForDel(config, res);
  if (kt::VersionAtLeast(version, "0.4.0")) {
    kt::PluginResult check = kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", del_config));
    INFO("CHECK: " << kt::Describe(check));
    CHECK(check.exit == 0);
    CHECK(check.out.empty());
  }

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  if (kind == "host-local") {
    CHECK_FALSE(kt::FileExists(lease_dir + "/" + want));
    for (const auto& f : kt::StateFiles(lease_dir)) {
      INFO("host-local file left: " << f);
      CHECK((f == "lock" || f.rfind("last_reserved_ip", 0) == 0));
    }
  }
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());

  kt::PluginResult again = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("second DEL: " << kt::Describe(again));
  CHECK(again.exit == 0);
}

TEST_CASE("an IPAM plugin that fails ADD leaves the node and the pod untouched and no state") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 2, .pods = 2});
  // A one-address range: the first attachment takes it, the second finds none.
  const json ipam = {{"type", "host-local"},     {"subnet", kt::kSubnet4},   {"rangeStart", "10.9.0.100"},
                     {"rangeEnd", "10.9.0.100"}, {"gateway", kt::kGateway4}, {"dataDir", t.tmp() + "/ipam"}};
  auto config_for = [&](const std::string& dev) {
    return kt::PluginConfig({.cni_version = version,
                             .device = dev,
                             .data_dir = t.DataDir(),
                             .log_file = t.LogFile(),
                             .ipam = ipam});
  };
  const std::string first = t.ContainerId("first");
  const std::string second = t.ContainerId("second");
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", first, "net1", config_for("eth1"), 0));
  INFO("first ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const std::string node_held = kt::StableSnapshot(t.node());
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));

  kt::PluginResult failed = kt::RunPlugin(kt::Call(t, "ADD", second, "net1", config_for("eth2"), 1));
  kt::CheckError(failed, 104, {"host-local"});
  CHECK(kt::SettledDiff(node_held, t.node()) == "");
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", second, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), second).empty());
  CHECK(kt::FileExists(t.tmp() + "/ipam/erdma-test/10.9.0.100"));  // still the first one's

  kt::PluginResult del = kt::RunPlugin(
      kt::Call(t, "DEL", first, "net1", kt::AsRuntimeWouldForDel(config_for("eth1"), add.json), 0));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK_FALSE(kt::FileExists(t.tmp() + "/ipam/erdma-test/10.9.0.100"));
}

}  // namespace test_kernel_plugin_ipam_test
