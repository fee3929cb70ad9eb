// Move mode end to end against the real binary: ADD, CHECK, DEL, DEL again,
// standalone (Multus, CNI_IFNAME=net1) and chained after a Terway-shaped
// prevResult, with every supported cniVersion.
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_move_test {

using nlohmann::json;

namespace {

// CHECK exists from 0.4.0 on; before that the spec has no CHECK and the
// reference skel answers "incompatible version" (code 1).
void RunCheck(const kt::Topology& t, const std::string& version, const std::string& cid,
              const std::string& ifname, const json& config) {
  kt::PluginResult r = kt::RunPlugin(kt::Call(t, "CHECK", cid, ifname, config));
  INFO("CHECK: " << kt::Describe(r));
  if (kt::VersionAtLeast(version, "0.4.0")) {
    CHECK(r.exit == 0);
    CHECK(r.out.empty());
  } else {
    kt::CheckError(r, 1);
  }
}

void CheckResultIp(const json& result, const std::string& version, const std::string& addr, int iface,
                   const std::string& gateway) {
  json ip = kt::FindIp(result, addr);
  INFO("result " << result.dump() << " should hold ip " << addr);
  REQUIRE(ip.is_object());
  CHECK(ip.value("interface", -1) == iface);
  if (!gateway.empty()) CHECK(ip.value("gateway", "") == gateway);
  if (kt::VersionAtLeast(version, "1.0.0")) {
    CHECK_FALSE(ip.contains("version"));
  } else {
    CHECK(ip.value("version", "") == (addr.find(':') == std::string::npos ? "4" : "6"));
  }
}

}  // namespace

TEST_CASE(
    "standalone ADD moves the ENI into the pod as net1 with its addresses and policy routes and DEL puts it "
    "back exactly",
    "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 1, .ipv6 = true});
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("multus");
  json config = kt::PluginConfig({.cni_version = version,
                                  .data_dir = t.DataDir(),
                                  .log_file = t.LogFile(),
                                  .addresses = "inherit",
                                  .extra = {{"mtu", 1450}}});

  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(add.json.is_object());
  const json& res = add.json;
  CHECK(res.value("cniVersion", "") == version);
  REQUIRE(res.value("interfaces", json::array()).size() == 1);
  const json& iface = res["interfaces"][0];
  CHECK(iface.value("name", "") == "net1");
  CHECK(iface.value("sandbox", "") == t.PodPath());
  CHECK(iface.value("mac", "") == eni.mac);
  CheckResultIp(res, version, eni.ip4 + "/24", 0, kt::kGateway4);
  CheckResultIp(res, version, eni.ip6 + "/64", 0, kt::kGateway6);

  // The pod: net1 with the ENI's MAC, the configured MTU, both addresses and policy routing.
  long t4 = kt::CheckAttached(t.pod(), {.dev = "net1", .mac = eni.mac, .mtu = 1450, .addr = eni.ip4});
  long t6 = kt::CheckAttached(
      t.pod(),
      {.dev = "net1", .addr = eni.ip6, .prefix = 64, .subnet = kt::kSubnet6, .gateway = kt::kGateway6});
  CHECK(t4 == t6);
  // The node: the ENI is gone, and so are the routes through it.
  CHECK_FALSE(kt::LinkExists(t.node(), eni.name));
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));

  json del_config = kt::AsRuntimeWouldForDel(config, res);
  RunCheck(t, version, cid, "net1", del_config);

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(del.out.empty());
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());

  kt::PluginResult again = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("second DEL: " << kt::Describe(again));
  CHECK(again.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("chained after Terway ADD appends erdma0 to the prevResult and leaves the primary interface alone",
          "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 1, .primary = true});
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("terway");
  json base = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  json prev = kt::TerwayPrevResult(version, cid);
  json config = base;
  config["prevResult"] = prev;

  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginCall call = kt::Call(t, "ADD", cid, "eth0", config);
  call.cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=trainer-0";
  kt::PluginResult add = kt::RunPlugin(call);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(add.json.is_object());
  const json& res = add.json;
  CHECK(res.value("cniVersion", "") == version);

  // Nothing of prevResult lost or reordered; ours appended at index 1.
  REQUIRE(res.value("interfaces", json::array()).size() == 2);
  CHECK(res["interfaces"][0] == prev["interfaces"][0]);
  CHECK(res["interfaces"][1].value("name", "") == "erdma0");
  CHECK(res["interfaces"][1].value("sandbox", "") == t.PodPath());
  CHECK(res["interfaces"][1].value("mac", "") == eni.mac);
  REQUIRE(res.value("ips", json::array()).size() >= 2);
  CHECK(res["ips"][0] == prev["ips"][0]);
  CheckResultIp(res, version, eni.ip4 + "/24", 1, kt::kGateway4);
  REQUIRE(res.value("routes", json::array()).size() >= 1);
  CHECK(res["routes"][0] == prev["routes"][0]);
  CHECK(res.contains("dns"));
  CHECK(res.value("dns", json()) == prev["dns"]);

  kt::CheckAttached(t.pod(), {.dev = "erdma0", .mac = eni.mac, .addr = eni.ip4});
  // Terway's eth0 still owns the pod's default route and its address.
  CHECK(kt::Addresses(t.pod(), "eth0") == std::vector<std::string>{"172.16.0.5/24"});
  json via_main = kt::RouteGet(t.pod(), kt::kOffSubnetTarget);
  REQUIRE(via_main.is_object());
  CHECK(via_main.value("dev", "") == "eth0");
  CHECK(via_main.value("gateway", "") == "172.16.0.1");
  CHECK_FALSE(kt::LinkExists(t.pod(), "eth1"));
  CHECK_FALSE(kt::LinkExists(t.node(), eni.name));
  // State is keyed by the runtime's CNI_IFNAME, whatever our link is called.
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "eth0")));

  json del_config = kt::AsRuntimeWouldForDel(base, res);
  RunCheck(t, version, cid, "eth0", del_config);

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", del_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());

  kt::PluginResult again = kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", del_config));
  INFO("second DEL: " << kt::Describe(again));
  CHECK(again.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("CHECK names what differs when a policy rule was removed behind the plugin's back") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  if (!kt::VersionAtLeast(version, "0.4.0")) return;  // no CHECK before 0.4.0
  kt::Topology t;
  const std::string cid = t.ContainerId("drift");
  json config = kt::PluginConfig(
      {.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  json del_config = kt::AsRuntimeWouldForDel(config, add.json);

  kt::ShOk("ip -n " + t.pod() + " rule del from " + t.eni(1).ip4);
  kt::PluginResult check = kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", del_config));
  kt::CheckError(check, 105, {"rule"});

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::LinkExists(t.node(), "eth1"));
}

TEST_CASE("a device that was admin-down on the node comes home down with its address") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 1, .down = {1}});
  const std::string cid = t.ContainerId("down");
  json config = kt::PluginConfig(
      {.cni_version = version,
       .data_dir = t.DataDir(),
       .log_file = t.LogFile(),
       .ipam =
           json{{"type", "static"},
                {"addresses", json::array({{{"address", "10.9.0.150/24"}, {"gateway", kt::kGateway4}}})}}});
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  kt::CheckAttached(t.pod(), {.dev = "net1", .mac = t.eni(1).mac, .addr = "10.9.0.150"});

  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json)));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  json link = kt::LinkJson(t.node(), "eth1");
  REQUIRE(link.is_object());
  json flags = link.value("flags", json::array());
  CHECK(std::find(flags.begin(), flags.end(), "UP") == flags.end());
}

TEST_CASE(
    "CHECK holds the interface to the final result: a later plugin's MAC and MTU pass, unreported ones "
    "fail") {
  kt::Topology t;
  const std::string cid = t.ContainerId("tuned");
  json config = kt::PluginConfig(
      {.cni_version = "1.1.0", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  json final_config = kt::AsRuntimeWouldForDel(config, add.json);
  const std::string mtu_before =
      kt::ShOk("ip -n " + t.pod() + " -o link show net1 | sed -n 's/.* mtu \\([0-9]*\\) .*/\\1/p'");

  // What tuning after us does: a new MAC and MTU on net1, and the result it
  // passes on says so.
  kt::ShOk("ip -n " + t.pod() + " link set net1 address 02:11:22:33:44:55 mtu 1400");
  kt::CheckError(kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", final_config)), 105,
                 {"MAC", "02:11:22:33:44:55"});
  json tuned = final_config;
  for (auto& i : tuned["prevResult"]["interfaces"])
    if (i.value("name", "") == "net1") {
      i["mac"] = "02:11:22:33:44:55";
      i["mtu"] = 1400;
    }
  // Entries of other shapes in the result are not ours to judge.
  auto& ifs = tuned["prevResult"]["interfaces"];
  ifs.insert(ifs.begin(), json{{"name", 5}, {"sandbox", 7}});
  kt::PluginResult ok = kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", tuned));
  INFO("CHECK with the tuned result: " << kt::Describe(ok));
  CHECK(ok.exit == 0);
  // An MTU the result does not report is still caught.
  kt::ShOk("ip -n " + t.pod() + " link set net1 mtu 1300");
  kt::CheckError(kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", tuned)), 105, {"MTU 1300", "expected 1400"});

  // tuning's DEL would put both back before ours.
  kt::ShOk("ip -n " + t.pod() + " link set net1 address " + t.eni(1).mac + " mtu " + mtu_before);
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", final_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::LinkExists(t.node(), "eth1"));
}

TEST_CASE("libnl's NLCB=debug in the runtime's environment leaves stdout to the result") {
  kt::Topology t;
  const std::string cid = t.ContainerId("nlcb");
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  kt::PluginCall add_call = kt::Call(t, "ADD", cid, "net1", config);
  add_call.extra_env = {"NLCB=debug", "NLDBG=4"};  // libnl 3.7 sends these to stderr; stdout stays ours
  kt::PluginResult add = kt::RunPlugin(add_call);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(json::parse(add.out, nullptr, false).is_object());
  kt::PluginCall del_call = kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json));
  del_call.extra_env = add_call.extra_env;
  kt::PluginResult del = kt::RunPlugin(del_call);
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(del.out.empty());
}

}  // namespace test_kernel_plugin_move_test
