// macvlan and ipvlan modes with the real binary, real IPAM (Debian's
// host-local) and the real kernel: the child is born in the pod, reaches the
// VPC gateway through the policy routes, and DEL deletes it while the parent
// (the ENI stand-in) never changes.
#include <catch2/catch.hpp>
#include <future>
#include <set>

#include "test/kernel/harness.h"
#include "test/kernel/skip.h"

namespace test_kernel_plugin_child_test {

using nlohmann::json;

namespace {

json HostLocal(const kt::Topology& t) {
  return {{"type", "host-local"},     {"subnet", kt::kSubnet4},   {"rangeStart", "10.9.0.100"},
          {"rangeEnd", "10.9.0.140"}, {"gateway", kt::kGateway4}, {"dataDir", t.tmp() + "/ipam"}};
}

json ChildConfig(const kt::Topology& t, const std::string& version, const std::string& mode, json options) {
  kt::ConfigSpec spec{
      .cni_version = version, .data_dir = t.DataDir(), .log_file = t.LogFile(), .ipam = HostLocal(t)};
  spec.extra = {{"mode", mode}};
  if (!options.is_null()) spec.extra[mode] = std::move(options);
  return kt::PluginConfig(spec);
}

std::string IpOf(const json& result, size_t i) {
  const std::string cidr = result["ips"][i].value("address", "");
  return cidr.substr(0, cidr.find('/'));
}

// Whether this kernel can make a link of `kind` (macvlan, ipvlan) on a veth.
bool KernelHas(const std::string& kind) {
  const std::string ns = "ecni-probe-" + std::to_string(getpid()) + "-" + kind;
  kt::Sh("ip netns add " + ns);
  const bool ok = kt::Sh("ip -n " + ns + " link add p0 type veth peer name p1 && ip -n " + ns +
                         " link add link p0 name c0 type " + kind)
                      .exit == 0;
  kt::Sh("ip netns del " + ns);
  return ok;
}

}  // namespace

TEST_CASE("macvlan children in every mode get IPAM addresses and policy routes, DEL removes only them",
          "[sticky]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  const std::string mode = GENERATE(as<std::string>{}, "bridge", "private", "vepa", "passthru", "source");
  CAPTURE(version, mode);
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("macvlan");
  json options = {{"mode", mode}};
  if (mode == "source") {
    // Source mode receives only from listed senders: the VPC's gateway.
    json br = kt::LinkJson(t.vpc(), "br0");
    REQUIRE(br.is_object());
    options["sourceMacs"] = json::array({br.value("address", "")});
  }
  json config = ChildConfig(t, version, "macvlan", options);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const json& res = add.json;
  REQUIRE(res.value("interfaces", json::array()).size() == 1);
  const std::string mac = res["interfaces"][0].value("mac", "");
  json link = kt::LinkJson(t.pod(), "net1");
  REQUIRE(link.is_object());
  CHECK(link["linkinfo"].value("info_kind", "") == "macvlan");
  CHECK(link["linkinfo"]["info_data"].value("mode", "") == mode);
  CHECK(link.value("address", "") == mac);
  if (mode == "passthru")
    CHECK(mac == eni.mac);
  else
    CHECK(mac != eni.mac);
  kt::CheckAttached(t.pod(), {.dev = "net1", .mac = mac, .addr = IpOf(res, 0)});
  // The parent keeps its name, address and routes on the node.
  CHECK(kt::Addresses(t.node(), eni.name) == std::vector<std::string>{eni.ip4 + "/24"});

  json del_config = kt::AsRuntimeWouldForDel(config, res);
  if (kt::VersionAtLeast(version, "0.4.0")) {
    kt::PluginResult check = kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", del_config));
    INFO("CHECK: " << kt::Describe(check));
    CHECK(check.exit == 0);
  }
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  kt::PluginResult again = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("second DEL: " << kt::Describe(again));
  CHECK(again.exit == 0);
}

TEST_CASE("a macvlan child chained after the primary plugin is appended to its result") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t({.enis = 1, .pods = 1, .primary = true});
  const std::string cid = t.ContainerId("macvlan-chained");
  json base = ChildConfig(t, version, "macvlan", {{"mode", "bridge"}});
  json prev = kt::TerwayPrevResult(version, cid);
  json config = base;
  config["prevResult"] = prev;
  const std::string node_before = kt::StableSnapshot(t.node());

  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "eth0", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const json& res = add.json;
  REQUIRE(res.value("interfaces", json::array()).size() == 2);
  CHECK(res["interfaces"][0] == prev["interfaces"][0]);
  CHECK(res["interfaces"][1].value("name", "") == "erdma0");
  CHECK(res["ips"][0] == prev["ips"][0]);
  kt::CheckAttached(t.pod(), {.dev = "erdma0", .addr = IpOf(res, 1)});
  // The primary keeps the pod's default route.
  CHECK(kt::RouteGet(t.pod(), kt::kOffSubnetTarget).value("dev", "") == "eth0");

  json del_config = kt::AsRuntimeWouldForDel(base, res);
  if (kt::VersionAtLeast(version, "0.4.0"))
    CHECK(kt::RunPlugin(kt::Call(t, "CHECK", cid, "eth0", del_config)).exit == 0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", del_config)).exit == 0);
  CHECK_FALSE(kt::LinkExists(t.pod(), "erdma0"));
  CHECK(kt::LinkExists(t.pod(), "eth0"));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "eth0", del_config)).exit == 0);
}

TEST_CASE("8 parallel ADDs of macvlan children on one parent all succeed with distinct addresses") {
  constexpr int kPods = 8;
  kt::Topology t({.enis = 1, .pods = kPods});
  json config = ChildConfig(t, "1.0.0", "macvlan", {{"mode", "bridge"}});
  const std::string node_before = kt::StableSnapshot(t.node());
  std::vector<std::future<kt::PluginResult>> adds;
  for (int i = 0; i < kPods; ++i)
    adds.push_back(std::async(std::launch::async, [&, i] {
      return kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("par" + std::to_string(i)), "net1", config, i));
    }));
  std::set<std::string> ips, macs;
  std::vector<json> results;
  for (int i = 0; i < kPods; ++i) {
    kt::PluginResult r = adds[i].get();
    INFO("ADD " << i << ": " << kt::Describe(r));
    REQUIRE(r.exit == 0);
    ips.insert(IpOf(r.json, 0));
    macs.insert(r.json["interfaces"][0].value("mac", ""));
    results.push_back(r.json);
  }
  CHECK(ips.size() == kPods);
  CHECK(macs.size() == kPods);
  for (int i = 0; i < kPods; ++i) {
    INFO("pod " << i);
    CHECK(kt::Ping(t.pod(i), IpOf(results[i], 0), kt::kGateway4).exit == 0);
  }
  std::vector<std::future<kt::PluginResult>> dels;
  for (int i = 0; i < kPods; ++i)
    dels.push_back(std::async(std::launch::async, [&, i] {
      return kt::RunPlugin(kt::Call(t, "DEL", t.ContainerId("par" + std::to_string(i)), "net1",
                                    kt::AsRuntimeWouldForDel(config, results[i]), i));
    }));
  for (int i = 0; i < kPods; ++i) {
    kt::PluginResult r = dels[i].get();
    INFO("DEL " << i << ": " << kt::Describe(r));
    CHECK(r.exit == 0);
    CHECK_FALSE(kt::LinkExists(t.pod(i), "net1"));
  }
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

TEST_CASE("a second passthru macvlan on the same parent is refused with code 11 and changes nothing") {
  kt::Topology t({.enis = 1, .pods = 2});
  json config = ChildConfig(t, "1.0.0", "macvlan", {{"mode", "passthru"}});
  const std::string first = t.ContainerId("pt1");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", first, "net1", config, 0)).exit == 0);
  const std::string node_mid = kt::StableSnapshot(t.node());
  const std::string pod1_before = kt::StableSnapshot(t.pod(1));
  kt::PluginResult second = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("pt2"), "net1", config, 1));
  INFO("second ADD: " << kt::Describe(second));
  kt::CheckError(second, 11, {"passthru"});
  CHECK(kt::SettledDiff(node_mid, t.node()) == "");
  CHECK(kt::SettledDiff(pod1_before, t.pod(1)) == "");
  // Its host-local lease went back too.
  CHECK(kt::StateFiles(t.tmp() + "/ipam/erdma-test").size() <= 3);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", first, "net1", config, 0)).exit == 0);
}

TEST_CASE("a macvlan config asking to inherit the parent's addresses is refused before anything changes") {
  kt::Topology t;
  json config = ChildConfig(t, "1.0.0", "macvlan", {{"mode", "bridge"}});
  config["addresses"] = "inherit";
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("inh"), "net1", config));
  kt::CheckError(add, 7, {"addresses"});
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK_FALSE(kt::FileExists(t.DataDir() + "/erdma-test"));
}

TEST_CASE("ipvlan children in l2, l3 and l3s mode share the parent's MAC and are deleted on DEL",
          "[sticky]") {
  if (!KernelHas("ipvlan"))
    KT_SKIP("ipvlan: this kernel has no ipvlan driver (CONFIG_IPVLAN); the VM scenario `children` covers it");
  const std::string mode = GENERATE(as<std::string>{}, "l2", "l3", "l3s");
  CAPTURE(mode);
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  const std::string cid = t.ContainerId("ipvlan");
  json config = ChildConfig(t, "1.1.0", "ipvlan", {{"mode", mode}});
  const std::string node_before = kt::StableSnapshot(t.node());
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  json link = kt::LinkJson(t.pod(), "net1");
  REQUIRE(link.is_object());
  CHECK(link["linkinfo"].value("info_kind", "") == "ipvlan");
  CHECK(link.value("address", "") == eni.mac);
  if (mode == "l2") kt::CheckAttached(t.pod(), {.dev = "net1", .mac = eni.mac, .addr = IpOf(add.json, 0)});
  CHECK(kt::RunPlugin(kt::Call(t, "CHECK", cid, "net1", kt::AsRuntimeWouldForDel(config, add.json))).exit ==
        0);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

}  // namespace test_kernel_plugin_child_test
