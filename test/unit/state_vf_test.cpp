// The VF journal steps in the state file: written and read back unchanged,
// described for the log, refused when damaged.
#include <algorithm>
#include <catch2/catch.hpp>

#include "cni/state/state.h"

namespace test_unit_state_vf_test {

namespace {

cni::AttachmentState WithVfSteps() {
  cni::AttachmentState st;
  st.network = "rdma-vf";
  st.container_id = "c1";
  st.if_name = "net1";
  st.netns = "/run/netns/p";
  st.pod_if_name = "net1";
  st.origin.name = "ens1f0v0";
  st.origin.mac = "52:54:00:aa:00:02";
  cni::StepVf vf;
  vf.pf = "ens1f0";
  vf.pf_index = 3;
  vf.pci = "0000:3b:00.2";
  vf.netdev = "ens1f0v0";
  vf.netdev_mac = "52:54:00:aa:00:02";
  vf.applied.vf = vf.old.vf = 4;
  vf.applied.mac = "02:00:00:3b:00:02";
  vf.applied.vlan = netlink::VfVlan{100, 2};
  vf.applied.rate = netlink::VfRate{10, 1000};
  vf.applied.spoofchk = false;
  vf.applied.trust = true;
  vf.applied.link_state = netlink::kVfLinkStateDisable;
  vf.applied.node_guid = vf.applied.port_guid = "00:11:22:33:44:55:66:77";
  vf.old.mac = "00:00:00:00:00:00";
  vf.old.vlan = netlink::VfVlan{0, 0};
  vf.old.rate = netlink::VfRate{0, 0};
  vf.old.link_state = netlink::kVfLinkStateAuto;  // spoofchk, trust, GUIDs: not reported
  st.steps.push_back(vf);
  st.steps.push_back(cni::StepMove{"net1"});
  st.steps.push_back(cni::StepMac{"02:00:00:3b:00:02"});
  return st;
}

}  // namespace

TEST_CASE("VF and MAC steps survive the state file unchanged", "[state][vf]") {
  const cni::AttachmentState st = WithVfSteps();
  const nlohmann::json j = nlohmann::json::parse(cni::StateText(st));
  auto back = cni::StateFromJson(j);
  REQUIRE(back.ok());
  REQUIRE(back->steps.size() == 3);
  const auto* vf = std::get_if<cni::StepVf>(&back->steps[0]);
  REQUIRE(vf);
  const auto& want = std::get<cni::StepVf>(st.steps[0]);
  CHECK(vf->pf == want.pf);
  CHECK(vf->pf_index == want.pf_index);
  CHECK(vf->pci == want.pci);
  CHECK(vf->netdev == want.netdev);
  CHECK(vf->netdev_mac == want.netdev_mac);
  CHECK(vf->applied == want.applied);
  CHECK(vf->old == want.old);
  CHECK_FALSE(vf->old.spoofchk);
  CHECK_FALSE(vf->old.node_guid);
  const auto* mac = std::get_if<cni::StepMac>(&back->steps[2]);
  REQUIRE(mac);
  CHECK(mac->mac == "02:00:00:3b:00:02");
  CHECK(cni::StateText(*back) == cni::StateText(st));
}

TEST_CASE("VF steps are described with what they set and what it was", "[state][vf]") {
  const cni::AttachmentState st = WithVfSteps();
  const std::string d = cni::DescribeStep(st.steps[0]);
  CHECK(d.find("0000:3b:00.2") != std::string::npos);
  CHECK(d.find("ens1f0") != std::string::npos);
  CHECK(d.find("vlan 100 qos 2") != std::string::npos);
  CHECK(d.find("(was vf 4 mac 00:00:00:00:00:00 vlan 0 qos 0") != std::string::npos);
  CHECK(cni::DescribeStep(st.steps[2]) == "set mac 02:00:00:3b:00:02");
}

TEST_CASE("a damaged VF step is a state error, not a guess", "[state][vf]") {
  nlohmann::json j = nlohmann::json::parse(cni::StateText(WithVfSteps()));
  SECTION("without its old values") { j["steps"][0].erase("old"); }
  SECTION("a VLAN without its QoS") { j["steps"][0]["applied"].erase("qos"); }
  SECTION("a rate that is not a number") { j["steps"][0]["old"]["minTxRate"] = "fast"; }
  SECTION("a negative VF number") { j["steps"][0]["applied"]["vf"] = -1; }
  SECTION("a VF number past 32 bits") { j["steps"][0]["old"]["vf"] = 1ull << 32; }
  auto r = cni::StateFromJson(j);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kState);
}

TEST_CASE("the fault points of VF and MAC steps carry the op their state file entries have", "[state][vf]") {
  const nlohmann::json j = nlohmann::json::parse(cni::StateText(WithVfSteps()));
  const cni::AttachmentState st = WithVfSteps();
  CHECK(cni::StepOp(st.steps[0]) == j["steps"][0]["op"]);
  CHECK(cni::StepOp(st.steps[2]) == j["steps"][2]["op"]);
  CHECK(std::string(cni::StepOp(st.steps[0])) == "vf");
  CHECK(std::string(cni::StepOp(st.steps[2])) == "mac");
  const auto ops = cni::AllStepOps();
  CHECK(std::count(ops.begin(), ops.end(), "vf") == 1);
  CHECK(std::count(ops.begin(), ops.end(), "mac") == 1);
}

}  // namespace test_unit_state_vf_test
