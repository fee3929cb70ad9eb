// `erdma-cni diag` against a real attachment: what it reports about the pod
// netns (netdevs, SMC sysctls, memlock of the pod's processes) and how it
// compares erdma-cni's state with the kernel. This kernel has no RDMA or SMC
// netlink; diag must say so as a problem, not fail. The VM scenario
// `diag.sh` shows the RDMA side (ports, GIDs, pairing).
#include <catch2/catch.hpp>

#include "test/kernel/harness.h"

using nlohmann::json;

namespace {

json Diag(const kt::Topology& t, const std::string& netns, int* exit_code) {
  kt::ShResult r = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() + " diag --json --netns " +
                          netns + " --data-dir " + t.DataDir());
  *exit_code = r.exit;
  INFO("diag stdout: " << r.out << "\nstderr: " << r.err);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

}  // namespace

TEST_CASE("diag reports the pod's interface, its sysctls, its processes' memlock and a consistent state") {
  kt::Topology t;
  const kt::Eni& eni = t.eni(1);
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string cid = t.ContainerId("diag");
  REQUIRE(kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config)).exit == 0);
  // A process living in the pod, as the pause container would.
  // `ip netns exec` and sh exec in place: $! is the sleeper's pid.
  const std::string pid =
      kt::ShOk("ip netns exec " + t.pod() + " sh -c 'ulimit -l 64; exec sleep 30' >/dev/null 2>&1 & echo $!");
  kt::Sh("sleep 0.3");

  int rc = -1;
  json d = Diag(t, t.PodPath(), &rc);
  CHECK(d.value("netns", "") == t.PodPath());
  bool found = false;
  for (const auto& n : d["netdevs"])
    if (n.value("name", "") == "net1") {
      found = true;
      CHECK(n.value("mac", "") == eni.mac);
      CHECK(n.value("up", false));
    }
  CHECK(found);
  // No RDMA on this kernel: reported, and counted as a problem.
  CHECK(d["rdma"].contains("error"));
  CHECK(rc == 1);
  CHECK(d["smc"]["sysctls"].contains("net.ipv6.conf.all.disable_ipv6"));
  bool sleeper = false;
  for (const auto& p : d["memlock"]["processes"])
    if (p.value("comm", "") == "sleep") {
      sleeper = true;
      CHECK(p.value("soft", "") == "65536");
    }
  CHECK(sleeper);
  CHECK(d["memlock"].value("hint", "").find("LimitMEMLOCK=infinity") != std::string::npos);
  REQUIRE(d["states"].size() == 1);
  CHECK(d["states"][0].value("containerID", "") == cid);
  CHECK(d["states"][0]["problems"].empty());

  // --container finds the same netns through erdma-cni's state.
  kt::ShResult by_id = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() +
                              " diag --json --container " + cid + " --data-dir " + t.DataDir());
  json by_id_json = json::parse(by_id.out, nullptr, false);
  REQUIRE(by_id_json.is_object());
  CHECK(by_id_json.value("netns", "") == t.PodPath());
  CHECK(by_id_json["netdevs"].dump().find("\"net1\"") != std::string::npos);
  kt::ShResult unknown =
      kt::Sh(kt::PluginBinary() + " diag --container no-such-pod --data-dir " + t.DataDir());
  CHECK(unknown.exit == 2);
  CHECK(unknown.err.find("no erdma-cni state of container no-such-pod") != std::string::npos);
  CHECK(kt::Sh(kt::PluginBinary() + " diag --container " + cid + " --netns " + t.PodPath()).exit == 2);

  // Behind erdma-cni's back the interface goes: diag names the mismatch.
  kt::ShOk("ip -n " + t.pod() + " link set net1 netns " + t.node() + " name " + eni.name);
  json after = Diag(t, t.PodPath(), &rc);
  REQUIRE(after["states"].size() == 1);
  CHECK(after["states"][0]["problems"].dump().find("net1 is missing from the netns") != std::string::npos);
  kt::Sh("kill " + pid);

  // The human form says the same.
  kt::ShResult text = kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() + " diag --netns " +
                             t.PodPath() + " --data-dir " + t.DataDir());
  CHECK(text.out.find("!! ") != std::string::npos);
  CHECK(text.out.find("net1 is missing") != std::string::npos);
  CHECK(kt::Sh(kt::PluginBinary() + " diag --bogus").exit == 2);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
}
