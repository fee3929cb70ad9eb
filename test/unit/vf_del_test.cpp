// DEL in mode vf when the state cannot be read: the device claim says which
// VF was ours, and keeps the VF step ADD planned. A VF's netdev comes home by
// the claim's name, recognised in the pod by the MAC the runtime gave it; a
// VF on vfio-pci moved nothing. Either way the VF's old settings go back
// through the PF from the claim, and the claim goes once they are back.
#include <fstream>

#include "test/unit/fake_vf_node.h"

namespace test_unit_vf_del_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

namespace {

void Garble(const VfNode& n, const std::string& cid = "c1") {
  std::ofstream out(n.dir.path + "/erdma/" + cni::StateStore::FileName(cid, "net1"), std::ios::trunc);
  out << "{\"version\": 1, \"steps\": [";  // cut short
}

}  // namespace

TEST_CASE("DEL with an unreadable state brings a VF's netdev home by its claim, with the node MAC back",
          "[engine][vf][salvage]") {
  for (bool follow : {true, false}) {
    INFO("the VF netdev's MAC follows the PF's: " << follow);
    fake::VfWorld::PfSpec spec;
    spec.follow_mac = follow;
    VfNode n(spec);
    auto cfg = n.VfConfig(kVfDevice, kSettings);
    const std::string pf_before = n.vfs.Describe();
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    REQUIRE(n.vfs.State(n.pf, 0).vlan == 100);
    // In the pod it answers only to the MAC the runtime asked for.
    REQUIRE(PodLink(n, "net1")->mac == "02:00:00:3b:00:02");
    Garble(n);

    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(n.world.NetnsOfLink(n.vf0) == fake::World::kRoot);
    CHECK(n.world.LinkByIndex(n.vf0)->name == "ens1f0v0");
    CHECK(n.world.LinkByIndex(n.vf0)->mac == "52:54:00:aa:00:02");
    CHECK_FALSE(n.world.LinkByIndex(n.vf0)->up);  // down, as ADD found it
    CHECK_FALSE(PodLink(n, "net1"));
    CHECK(n.ipam.leases == 0);
    // The claim is gone; the unreadable state is kept aside.
    CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c1@net1.unreadable"});
    // The claim knew the VF's old settings: the PF has them back.
    CHECK(n.vfs.Describe() == pf_before);
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());

    // The VF serves the next pod.
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2")).ok());
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel, "c2")).ok());
    CHECK(n.world.LinkByIndex(n.vf0)->name == "ens1f0v0");
  }
}

TEST_CASE(
    "DEL with an unreadable state keeps the VF's claim while the PF refuses its old settings, and the "
    "next DEL puts them back",
    "[engine][vf][salvage]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  const std::string pf_before = n.vfs.Describe();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  Garble(n);
  n.vfs.FailCall(1, EBUSY);  // the first PF call of this DEL: the settings' restore
  auto refused = n.Del(cfg, n.MakeEnv(cni::Command::kDel));
  REQUIRE_FALSE(refused.ok());
  CHECK(n.vfs.failure_fired());
  CHECK(refused.error().msg.find("restoring VF 0000:3b:00.2") != std::string::npos);
  // The netdev is home; the claim and the unreadable state stay for the next DEL.
  CHECK(n.world.NetnsOfLink(n.vf0) == fake::World::kRoot);
  CHECK(n.vfs.State(n.pf, 0).vlan == 100);
  CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c1@net1", "/devices/ens1f0v0"});

  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.vfs.Describe() == pf_before);
  CHECK(n.world.LinkByIndex(n.vf0)->mac == "52:54:00:aa:00:02");
  CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c1@net1.unreadable"});
}

TEST_CASE(
    "DEL with an unreadable state of a vfio-pci VF puts its settings back, drops its claim and touches "
    "no link",
    "[engine][vf][salvage]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfioDevice, R"(,"vf":{"vlan":200})");
  const std::string pf_before = n.vfs.Describe();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  REQUIRE(n.vfs.State(n.pf, 1).vlan == 200);
  // The pod's own interface of that name (the VF has none): not ours.
  const int other_index = n.world.AddLink(n.pod_ns, {0, "net1", "02:00:00:00:00:99", 1500, true, ""});
  Garble(n);
  n.world.ClearCalls();
  const auto before = n.world.Snapshot();

  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK(n.world.mutating_calls() == 0);
  CHECK(n.world.NetnsOfLink(other_index) == n.pod_ns);
  CHECK(n.ipam.leases == 0);
  CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c1@net1.unreadable"});
  CHECK(n.vfs.Describe() == pf_before);
  // Another pod can have the VF.
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2")).ok());
}

TEST_CASE(
    "DEL with an unreadable state puts the VF's settings back from the claim though the config no longer "
    "names mode vf",
    "[engine][vf][salvage]") {
  for (const std::string& device : {kVfDevice, kVfioDevice}) {
    INFO(device);
    VfNode n;
    const std::string pf_before = n.vfs.Describe();
    const auto before = n.world.Snapshot();
    REQUIRE(n.Add(n.VfConfig(device, R"(,"vf":{"vlan":100})"), n.MakeEnv(cni::Command::kAdd)).ok());
    Garble(n);
    // Edited since ADD: the same device, in mode move.
    auto edited =
        conf::Parse(cni::Modes(),
                    R"({"cniVersion":"1.1.0","name":"erdma","type":"erdma-cni","mode":"move","device":)" +
                        device + R"(,"ipam":{"type":"fake-ipam"},"dataDir":")" + n.dir.path + "\"}",
                    /*for_del=*/true);
    REQUIRE(edited.ok());
    REQUIRE(n.Del(*edited, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(n.vfs.Describe() == pf_before);
    // The netdev home by the claim's name and MAC, down as it was.
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
    CHECK(n.ipam.leases == 0);
    CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c1@net1.unreadable"});
  }
}

}  // namespace test_unit_vf_del_test
