// `erdma-cni diag` on attachments of mode vf, made by ADD on the fake node:
// each names its VF and PF (one that changed VF settings from its journal, a
// VF netdev with nothing to set, journaled as a plain move, from its claim and
// sysfs), and a VF on vfio-pci, which has no netdev in the pod, is not
// reported as missing one.
#include "cni/admin/diag.h"
#include "cni/admin/diag_render.h"
#include "test/unit/fake_vf_node.h"

namespace test_unit_diag_vf_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

namespace {

// diag of the fake node's dataDir, looking at the pod's netns.
json Diagnose(VfNode& n) {
  cni::DiagOptions opts;
  opts.netns = "/run/netns/pod";
  opts.data_dirs = {n.dir.path};
  opts.sysfs_root = n.sysfs_root;
  opts.proc_root = n.dir.path + "/noproc";
  cni::DiagSources src;
  src.links = n.world.Kernel(n.pod_ns);
  return cni::Diagnose(opts, src);
}

}  // namespace

TEST_CASE("diag lists each VF attachment with its VF and PF, and a vfio-pci VF lacks no netdev",
          "[engine][vf][diag]") {
  VfNode n;
  REQUIRE(n.Add(n.VfConfig(kVfioDevice, R"(,"vf":{"vlan":200})"), n.MakeEnv(cni::Command::kAdd)).ok());
  REQUIRE(n.Add(n.VfConfig(kVfDevice, kSettings), n.MakeEnv(cni::Command::kAdd, "c2")).ok());

  auto problems_of = [](const json& state) {
    std::string all;
    for (const auto& p : state["problems"]) all += p.get<std::string>() + "\n";
    return all;
  };

  json report = Diagnose(n);
  REQUIRE(report["states"].size() == 2);
  std::map<std::string, json> by_container;
  for (const auto& s : report["states"]) by_container[s["containerID"].get<std::string>()] = s;
  const json& vfio = by_container.at("c1");
  CHECK(vfio["vf"] == json({{"pci", kVfioPci}, {"pf", "ens1f0"}, {"vf", 1}, {"netdev", ""}}));
  CHECK(problems_of(vfio).find("missing") == std::string::npos);
  const json& netdev = by_container.at("c2");
  CHECK(netdev["vf"] == json({{"pci", kVfPci}, {"pf", "ens1f0"}, {"vf", 0}, {"netdev", "ens1f0v0"}}));
  CHECK(problems_of(netdev).find("missing") == std::string::npos);
  const std::string text = cni::RenderDiag(report);
  CHECK(text.find("VF 0000:3b:00.3 (vf 1 of ens1f0), no netdev (user-space driver)") != std::string::npos);
  CHECK(text.find("VF 0000:3b:00.2 (vf 0 of ens1f0), netdev ens1f0v0") != std::string::npos);

  // The VF's netdev is renamed behind erdma-cni's back: that one is missing.
  REQUIRE(n.world.Kernel(n.pod_ns)->RenameLink(n.vf0, "renamed").ok());
  report = Diagnose(n);
  for (const auto& s : report["states"]) {
    INFO(s.dump());
    CHECK((problems_of(s).find("net1 is missing") != std::string::npos) == (s["containerID"] == "c2"));
  }
}

TEST_CASE("diag names the VF of an attachment that set nothing on it, from its claim and sysfs",
          "[engine][vf][diag]") {
  VfNode n;
  REQUIRE(n.Add(n.VfConfig(kVfDevice), n.MakeEnv(cni::Command::kAdd)).ok());
  json report = Diagnose(n);
  REQUIRE(report["states"].size() == 1);
  const json& s = report["states"][0];
  INFO(s.dump());
  CHECK(s["vf"] == json({{"pci", kVfPci}, {"pf", "ens1f0"}, {"vf", 0}, {"netdev", "ens1f0v0"}}));
  CHECK(s["problems"].dump().find("missing") == std::string::npos);
  CHECK(cni::RenderDiag(report).find("VF 0000:3b:00.2 (vf 0 of ens1f0), netdev ens1f0v0") !=
        std::string::npos);
}

}  // namespace test_unit_diag_vf_test
