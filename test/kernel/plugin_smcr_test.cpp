// SMC-R on this machine's kernel, which has no SMC: onUnsupported decides
// between an error and going on without any of SMC-R (its sysctls, an
// ordinary per-netns one standing in for tcp2smc, stay as they were), and
// mode none passes the primary plugin's result through without moving
// anything. The VM scenario smcr.sh writes them on kernels with SMC.
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

namespace test_kernel_plugin_smcr_test {

using nlohmann::json;

namespace {

std::string Sysctl(const std::string& netns, const std::string& name) {
  std::string v = kt::ShOk("ip netns exec " + netns + " sysctl -n " + name);
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return v;
}

const json kAnnotations = {
    {"io.kubernetes.cri.pod-annotations", {{"network.alibabacloud.com/erdma-smcr", "true"}}}};

// tcp_ecn is per netns and 2 by default: "1" shows where the write landed.
json SmcrConfig(const std::string& on_unsupported) {
  return {{"sysctls", {{"net.ipv4.tcp_ecn", "1"}}},
          {"pnetId", "AABBCCDDEEFF"},
          {"onUnsupported", on_unsupported}};
}

}  // namespace

TEST_CASE("without SMC in the kernel onUnsupported warn sets nothing of SMC-R in the pod and says so once",
          "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  const std::string cid = t.ContainerId("smcr");
  json config = kt::PluginConfig({.cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["runtimeConfig"] = kAnnotations;
  config["smcr"] = SmcrConfig("warn");  // this kernel has no SMC netlink
  const std::string node_ecn = Sysctl(t.node(), "net.ipv4.tcp_ecn");
  const std::string pod_ecn = Sysctl(t.pod(), "net.ipv4.tcp_ecn");
  REQUIRE(pod_ecn != "1");

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(Sysctl(t.pod(), "net.ipv4.tcp_ecn") == pod_ecn);
  CHECK(Sysctl(t.pod(), "net.ipv6.conf.all.disable_ipv6") == "0");
  CHECK(Sysctl(t.node(), "net.ipv4.tcp_ecn") == node_ecn);
  CHECK(Sysctl(t.node(), "net.ipv6.conf.all.disable_ipv6") == "0");
  const std::string log = kt::ShOk("cat " + t.LogFile());
  const size_t said = log.find("kernel has no SMC");
  REQUIRE(said != std::string::npos);
  CHECK(log.find("kernel has no SMC", said + 1) == std::string::npos);
  CHECK(log.find("nothing of SMC-R is set in this pod") != std::string::npos);
  if (kt::VersionAtLeast(version, "0.4.0")) {
    kt::PluginResult check =
        kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json)));
    INFO("CHECK: " << kt::Describe(check));
    CHECK(check.exit == 0);
  }
  kt::PluginResult del =
      kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json)));
  INFO("DEL: " << kt::Describe(del));
  REQUIRE(del.exit == 0);
  CHECK(Sysctl(t.pod(), "net.ipv4.tcp_ecn") == pod_ecn);
  CHECK(Sysctl(t.pod(), "net.ipv6.conf.all.disable_ipv6") == "0");
}

TEST_CASE("without SMC in the kernel onUnsupported error fails ADD naming SMC and leaves nothing behind") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["runtimeConfig"] = kAnnotations;
  config["smcr"] = SmcrConfig("error");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string pod_ecn = Sysctl(t.pod(), "net.ipv4.tcp_ecn");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("nosmc"), "net1", config));
  kt::CheckError(add, 114, {"SMC"});
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(Sysctl(t.pod(), "net.ipv4.tcp_ecn") == pod_ecn);
  CHECK(Sysctl(t.pod(), "net.ipv6.conf.all.disable_ipv6") == "0");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

// A kernel with SMC but without tcp2smc (the default sysctl) is named with
// where tcp2smc exists: the unit suite (add_del_test.cpp) and the VMs.
TEST_CASE("the default SMC-R config asked through args.cni fails on a kernel without SMC naming it") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["args"] = {{"cni", {{"erdma-smcr", "true"}}}};  // Multus passes it this way
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("tcp2smc"), "net1", config));
  kt::CheckError(add, 114, {"kernel has no SMC"});
  CHECK_THAT(add.json.value("msg", ""), Catch::Contains("set smcr.onUnsupported to \"warn\""));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
}

TEST_CASE("an annotation that is not a boolean is code 7 naming it") {
  kt::Topology t;
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["runtimeConfig"] = {
      {"io.kubernetes.cri.pod-annotations", {{"network.alibabacloud.com/erdma-smcr", "yes please"}}}};
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("badbool"), "net1", config));
  kt::CheckError(add, 7, {"network.alibabacloud.com/erdma-smcr"});
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("mode none passes prevResult through unchanged, SMC-R asked on a kernel without it setting nothing",
          "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 1, .primary = true});
  const std::string cid = t.ContainerId("none");
  json config = kt::PluginConfig(
      {.cni_version = version, .device = "", .data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["mode"] = "none";
  config["runtimeConfig"] = kAnnotations;
  config["smcr"] = SmcrConfig("warn");
  const json prev = kt::TerwayPrevResult(version, cid);
  config["prevResult"] = prev;
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_ecn = Sysctl(t.pod(), "net.ipv4.tcp_ecn");

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "eth0", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(add.json == prev);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");    // nothing moved
  CHECK(Sysctl(t.pod(), "net.ipv4.tcp_ecn") == pod_ecn);  // no SMC: nothing of SMC-R

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", config));
  INFO("DEL: " << kt::Describe(del));
  REQUIRE(del.exit == 0);
  CHECK(Sysctl(t.pod(), "net.ipv4.tcp_ecn") == pod_ecn);
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

TEST_CASE("mode none without the annotation writes no state and touches nothing") {
  kt::Topology t({.enis = 1, .pods = 1, .primary = true});
  const std::string cid = t.ContainerId("plain");
  json config = kt::PluginConfig({.device = "", .data_dir = t.DataDir(), .log_file = t.LogFile()});
  config["mode"] = "none";
  config["prevResult"] = kt::TerwayPrevResult("1.0.0", cid);
  const std::string pod_before = kt::StableSnapshot(t.pod());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "eth0", config));
  REQUIRE(add.exit == 0);
  CHECK(add.json == config["prevResult"]);
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

}  // namespace test_kernel_plugin_smcr_test
