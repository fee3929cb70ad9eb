// A VF whose DEL the runtime lost: the pod netns died, the kernel returned
// the VF's netdev to the node under its pod-side name, and the state, the
// claim and the VF settings ADD made through the PF stayed. The next ADD of
// the VF finishes that DEL (settings and netdev back, then the new pod's);
// while the old netns lives, whatever its path, it is code 11.
#include <fstream>

#include "test/unit/fake_vf_node.h"

namespace test_unit_vf_stale_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

TEST_CASE("an ADD finishes the lost DEL of a VF whose pod netns died, then takes the VF",
          "[engine][vf][stale]") {
  fake::VfWorld::PfSpec spec;
  spec.follow_mac = false;
  VfNode n(spec);
  const auto node_before = n.world.Snapshot().netns.at(fake::World::kRoot);
  const std::string vfs_before = n.vfs.Describe();
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  REQUIRE(n.StateJson().contains("netnsId"));
  n.world.DeleteNetns(n.pod_ns);
  n.opener.Forget("/run/netns/pod");
  REQUIRE(n.world.LinkByIndex(n.vf0)->name == "net1");

  const int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);
  auto second = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  INFO((second.ok() ? std::string("ok") : second.error().msg));
  REQUIRE(second.ok());
  CHECK(n.world.NetnsOfLink(n.vf0) == pod2);
  // The old attachment is gone, its IPAM lease released (the new one holds one).
  CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c2@net1", "/devices/ens1f0v0"});
  CHECK(n.ipam.leases == 1);

  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel, "c2", "/run/netns/pod2")).ok());
  CHECK(n.world.Snapshot().netns.at(fake::World::kRoot) == node_before);
  CHECK(n.vfs.Describe() == vfs_before);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("a VF whose holder's netns lives is code 11 though the path it was added by is gone",
          "[engine][vf][stale]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  n.sys.RemoveNetdev(kVfPci, "ens1f0v0");
  n.opener.Forget("/run/netns/pod");  // the netns lives on, named by no path we know
  const int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);
  auto second = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == base::Code::kTryAgainLater);
  CHECK(second.error().msg.find("c1") != std::string::npos);
  CHECK(n.world.NetnsOfLink(n.vf0) == n.pod_ns);
  CHECK(n.StateFiles() == std::vector<std::string>{"/erdma/@c1@net1", "/devices/ens1f0v0"});
}

TEST_CASE(
    "a state of an older erdma-cni, without the netns identity, is recovered only once its path is gone",
    "[engine][vf][stale]") {
  VfNode n;
  const std::string vfs_before = n.vfs.Describe();
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  json old = n.StateJson();
  old.erase("netnsId");
  std::ofstream(n.dir.path + "/erdma/" + cni::StateStore::FileName("c1", "net1"), std::ios::trunc)
      << old.dump();
  const int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);

  // Its path still opens as a netns: live.
  auto refused = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == base::Code::kTryAgainLater);
  CHECK(n.world.NetnsOfLink(n.vf0) == n.pod_ns);

  n.world.DeleteNetns(n.pod_ns);
  n.opener.Forget("/run/netns/pod");
  auto taken = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  INFO((taken.ok() ? std::string("ok") : taken.error().msg));
  REQUIRE(taken.ok());
  CHECK(n.world.NetnsOfLink(n.vf0) == pod2);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel, "c2", "/run/netns/pod2")).ok());
  CHECK(n.vfs.Describe() == vfs_before);
  CHECK(n.StateFiles().empty());
}

}  // namespace test_unit_vf_stale_test
