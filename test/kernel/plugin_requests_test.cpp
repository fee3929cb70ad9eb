// What the runtime asks for the pod (podman's --mac-address and --ip reach a
// plugin as CNI_ARGS MAC= and IP=): honoured where the mode can, refused with
// a CNI error naming the mode (and nothing changed) where it cannot; never
// silently ignored.
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_requests_test {

using nlohmann::json;

namespace {

json Macvlan(const kt::Topology& t) {
  json c = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  c["mode"] = "macvlan";
  c["ipam"] = {{"type", "host-local"},     {"subnet", kt::kSubnet4},   {"rangeStart", "10.9.0.100"},
               {"rangeEnd", "10.9.0.140"}, {"gateway", kt::kGateway4}, {"dataDir", t.tmp() + "/ipam"}};
  return c;
}

kt::PluginResult Run(const kt::Topology& t, const std::string& command, const std::string& cid,
                     const json& config, const std::string& args) {
  kt::PluginCall call = kt::Call(t, command, cid, "net1", config);
  call.cni_args = args;
  return kt::RunPlugin(call);
}

// ADD refused with code 7 and `says`; the node and the pod are as before.
void Refused(const kt::Topology& t, const json& config, const std::string& args, const std::string& says) {
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string cid = t.ContainerId("refused");
  kt::PluginResult add = Run(t, "ADD", cid, config, args);
  INFO("ADD: " << kt::Describe(add));
  kt::CheckError(add, 7, {says});
  CHECK(kt::SettledDiff(node_before, t.node()).empty());
  CHECK(kt::SettledDiff(pod_before, t.pod()).empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

}  // namespace

TEST_CASE("CNI_ARGS MAC gives a macvlan child that MAC, DEL removes it") {
  kt::Topology t;
  const std::string cid = t.ContainerId("mac");
  const json config = Macvlan(t);
  const std::string args = "IgnoreUnknown=1;K8S_POD_NAME=p;MAC=02:aa:bb:00:00:07";
  kt::PluginResult add = Run(t, "ADD", cid, config, args);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(add.json["interfaces"][0].value("mac", "") == "02:aa:bb:00:00:07");
  json link = kt::LinkJson(t.pod(), "net1");
  REQUIRE(link.is_object());
  CHECK(link.value("address", "") == "02:aa:bb:00:00:07");
  REQUIRE(Run(t, "DEL", cid, config, args).exit == 0);
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
}

TEST_CASE(
    "CNI_ARGS MAC and IP reach a macvlan child on a device chosen from a pool, where the chosen device is "
    "attached as a group member") {
  kt::Topology t({.enis = 2});
  const std::string cid = t.ContainerId("poolmac");
  json config = Macvlan(t);
  config["device"] = {{"pool", {{"names", {t.eni(1).name, t.eni(2).name}}}}};
  const std::string args = "IgnoreUnknown=1;K8S_POD_NAME=p;MAC=02:aa:bb:00:00:08;IP=10.9.0.124";
  kt::PluginResult add = Run(t, "ADD", cid, config, args);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  json link = kt::LinkJson(t.pod(), "net1");
  REQUIRE(link.is_object());
  CHECK(link.value("address", "") == "02:aa:bb:00:00:08");
  CHECK(kt::Addresses(t.pod(), "net1") == std::vector<std::string>{"10.9.0.124/24"});
  REQUIRE(Run(t, "DEL", cid, config, args).exit == 0);
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
}

TEST_CASE("CNI_ARGS IP reaches the IPAM plugin unchanged: host-local gives the pod that address") {
  kt::Topology t;
  const std::string cid = t.ContainerId("ip");
  const json config = Macvlan(t);
  const std::string args = "IgnoreUnknown=1;IP=10.9.0.123";
  kt::PluginResult add = Run(t, "ADD", cid, config, args);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(add.json["ips"][0].value("address", "") == "10.9.0.123/24");
  CHECK(kt::Addresses(t.pod(), "net1") == std::vector<std::string>{"10.9.0.123/24"});
  REQUIRE(Run(t, "DEL", cid, config, args).exit == 0);
}

TEST_CASE("a MAC in CNI_ARGS is refused in move and ipvlan mode, naming the mode, nothing changes") {
  kt::Topology t;
  const std::string args = "IgnoreUnknown=1;MAC=02:aa:bb:00:00:07";
  Refused(t, kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"}),
          args, "CNI_ARGS MAC: mode \"move\" keeps the device's own MAC");
  json ipvlan = Macvlan(t);
  ipvlan["mode"] = "ipvlan";
  Refused(t, ipvlan, args, "CNI_ARGS MAC: mode \"ipvlan\" children share their parent's MAC");
}

TEST_CASE(
    "with addresses inherit, a requested IP must be the device's own, another is refused and nothing "
    "changes") {
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  const json config =
      kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
  Refused(t, config, "IgnoreUnknown=1;IP=10.9.0.99",
          "CNI_ARGS IP: 10.9.0.99 is not an address of " + eni.name);
  json rc = config;
  rc["runtimeConfig"] = {{"ips", {"10.9.0.99/24"}}};
  Refused(t, rc, "", "runtimeConfig.ips: 10.9.0.99/24 is not an address of " + eni.name);
  // The device's own address is what inherit gives anyway: accepted.
  const std::string cid = t.ContainerId("own");
  kt::PluginResult add = Run(t, "ADD", cid, config, "IgnoreUnknown=1;IP=" + eni.ip4);
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(kt::Addresses(t.pod(), "net1") == std::vector<std::string>{eni.ip4 + "/24"});
  REQUIRE(Run(t, "DEL", cid, config, "").exit == 0);
}

TEST_CASE("an unknown CNI_ARGS key without IgnoreUnknown is refused before anything changes") {
  kt::Topology t;
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginResult add = Run(t, "ADD", t.ContainerId("unknown"), Macvlan(t), "K8S_POD_NAME=p;COLOR=blue");
  INFO("ADD: " << kt::Describe(add));
  kt::CheckError(add, 4, {"CNI_ARGS: unknown key \"COLOR\""});
  CHECK(kt::SettledDiff(node_before, t.node()).empty());
}

}  // namespace test_kernel_plugin_requests_test
