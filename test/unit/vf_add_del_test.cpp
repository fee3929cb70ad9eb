// Mode vf against the fake kernel, a fake PF and a sysfs tree laid out as the
// kernel does: VF settings through the PF before the VF's netdev moves like
// an ENI, the old settings back on DEL, rollback at every kernel and PF call,
// and a VF on vfio-pci that gets its settings and a pciID and moves nothing.
#include "cni/driver/registry.h"
#include "test/unit/fake_vf_node.h"

namespace test_unit_vf_add_del_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

TEST_CASE("a VF gets its settings through the PF, then its netdev moves into the pod like an ENI",
          "[engine][vf]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  const netlink::VfState vf = n.vfs.State(n.pf, 0);
  CHECK(vf.mac == "02:00:00:3b:00:02");
  CHECK(vf.vlan == 100);
  CHECK(vf.qos == 2);
  CHECK(vf.spoofchk == false);
  CHECK(vf.trust == true);
  CHECK(vf.link_state == netlink::kVfLinkStateEnable);
  CHECK(vf.min_tx_rate == 0);
  CHECK(vf.max_tx_rate == 1000);
  // The netdev is in the pod under its final name with the MAC, up, addressed.
  CHECK(n.world.NetnsOfLink(n.vf0) == n.pod_ns);
  auto link = PodLink(n, "net1");
  REQUIRE(link);
  CHECK(link->index == n.vf0);
  CHECK(link->mac == "02:00:00:3b:00:02");
  CHECK(link->up);
  CHECK(HasRoute(n.world, n.pod_ns, "10.9.0.0/24", netlink::kTableMain, 200));
  CHECK((*res)["interfaces"][0]["name"] == "net1");
  CHECK((*res)["interfaces"][0]["mac"] == "02:00:00:3b:00:02");
  CHECK((*res)["interfaces"][0]["pciID"] == kVfPci);
  CHECK((*res)["ips"][0]["address"] == "10.9.0.150/24");
  // The journal: the PF step first, then IPAM, the move, the pod-side MAC.
  json st = n.StateJson();
  REQUIRE(st["steps"].size() > 4);
  CHECK(st["steps"][0]["op"] == "vf");
  CHECK(st["steps"][0]["pf"] == "ens1f0");
  CHECK(st["steps"][0]["old"]["vlan"] == 0);
  CHECK(st["steps"][0]["old"]["spoofchk"] == true);
  CHECK(st["steps"][1]["op"] == "ipam");
  CHECK(st["steps"][2]["op"] == "move");
  CHECK(st["steps"][3]["op"] == "mac");
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
}

TEST_CASE("DEL puts the VF's settings back and brings its netdev home, whether or not its MAC followed",
          "[engine][vf]") {
  for (bool follow : {true, false}) {
    INFO("the VF netdev's MAC follows the PF's: " << follow);
    fake::VfWorld::PfSpec spec;
    spec.follow_mac = follow;
    VfNode n(spec);
    netlink::VfState old = n.vfs.State(n.pf, 0);
    old.vlan = 7;
    old.max_tx_rate = 300;
    n.vfs.SetState(n.pf, old);
    const std::string before = n.Everything();
    auto cfg = n.VfConfig(kVfDevice, kSettings + R"(,"mtu":9000)");
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    CHECK(PodLink(n, "net1")->mac == "02:00:00:3b:00:02");
    CHECK(n.vfs.State(n.pf, 0).vlan == 100);
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(n.Everything() == before);
    CHECK(n.StateFiles().empty());
    CHECK(n.ipam.leases == 0);
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(n.Everything() == before);
  }
}

TEST_CASE("a VF can be named by its netdev or by the device plugin's deviceID", "[engine][vf]") {
  for (const std::string& device :
       {std::string(R"({"name":"ens1f0v0"})"), std::string(R"({"mac":"52:54:00:aa:00:02"})")}) {
    INFO(device);
    VfNode n;
    const std::string before = n.Everything();
    auto cfg = n.VfConfig(device, R"(,"vf":{"vlan":5})");
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    CHECK(n.vfs.State(n.pf, 0).vlan == 5);
    CHECK(n.world.NetnsOfLink(n.vf0) == n.pod_ns);
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(n.Everything() == before);
  }
  // Multus hands the SR-IOV device plugin's PCI address over as deviceID.
  VfNode n;
  std::string text = R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","mode":"vf",)"
                     R"("deviceID":"0000:3b:00.2","ipam":{"type":"fake-ipam"},"dataDir":")" +
                     n.dir.path + "\"}";
  auto cfg = conf::Parse(cni::Modes(), text);
  REQUIRE(cfg.ok());
  auto res = n.Add(*cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK(n.world.NetnsOfLink(n.vf0) == n.pod_ns);
  CHECK_FALSE((*res)["interfaces"][0].contains("pciID"));  // 1.1.0 only
}

TEST_CASE("a VF ADD that fails at any kernel or PF call leaves node, pod and VF exactly as before",
          "[engine][vf][rollback]") {
  const std::string extra = kSettings + R"(,"mtu":9000)";
  int kernel_calls = 0, vf_calls = 0;
  {
    VfNode n;
    REQUIRE(n.Add(n.VfConfig(kVfDevice, extra), n.MakeEnv(cni::Command::kAdd)).ok());
    kernel_calls = n.world.mutating_calls();
    vf_calls = n.vfs.mutating_calls();
  }
  REQUIRE(kernel_calls >= 8);
  REQUIRE(vf_calls == 1);
  for (int fail = 1; fail <= kernel_calls + vf_calls; ++fail) {
    INFO("failing call " << fail << " (" << kernel_calls << " kernel, " << vf_calls << " PF)");
    VfNode n;
    const std::string before = n.Everything();
    if (fail <= kernel_calls)
      n.world.FailCall(fail);
    else
      n.vfs.FailCall(fail - kernel_calls);
    auto res = n.Add(n.VfConfig(kVfDevice, extra), n.MakeEnv(cni::Command::kAdd));
    REQUIRE_FALSE(res.ok());
    CHECK((n.world.failure_fired() || n.vfs.failure_fired()));
    CHECK(n.Everything() == before);
    CHECK(n.StateFiles().empty());
    CHECK(n.ipam.leases == 0);
  }
}

TEST_CASE("a VF DEL that fails at any call keeps the state, and a second DEL restores everything",
          "[engine][vf][rollback]") {
  int kernel_calls = 0, vf_calls = 0;
  {
    VfNode n;
    auto cfg = n.VfConfig(kVfDevice, kSettings);
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    n.world.ClearCalls();
    n.vfs.ClearCalls();
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    kernel_calls = n.world.mutating_calls();
    vf_calls = n.vfs.mutating_calls();
  }
  REQUIRE(vf_calls == 1);
  for (int fail = 1; fail <= kernel_calls + vf_calls; ++fail) {
    INFO("failing DEL call " << fail << " (" << kernel_calls << " kernel, " << vf_calls << " PF)");
    VfNode n;
    const std::string before = n.Everything();
    auto cfg = n.VfConfig(kVfDevice, kSettings);
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    if (fail <= kernel_calls)
      n.world.FailCall(fail);
    else
      n.vfs.FailCall(fail - kernel_calls);
    REQUIRE_FALSE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK_FALSE(n.StateFiles().empty());
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(n.Everything() == before);
    CHECK(n.StateFiles().empty());
  }
}

TEST_CASE("a PF that refuses one setting leaves none applied: the kernel's partial work is undone",
          "[engine][vf][rollback]") {
  fake::VfWorld::PfSpec spec;
  spec.unsupported = {"trust"};  // after mac, vlan, rate, spoofchk and link state in do_setvfinfo's order
  VfNode n(spec);
  const std::string before = n.Everything();
  auto res = n.Add(n.VfConfig(kVfDevice, kSettings), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().sys_errno == EOPNOTSUPP);
  CHECK(res.error().msg.find("ens1f0") != std::string::npos);
  CHECK(n.Everything() == before);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("a VF on vfio-pci gets its settings and a pciID result with IPAM's address, nothing moves",
          "[engine][vf]") {
  VfNode n;
  const auto world_before = n.world.Snapshot();
  const std::string before = n.Everything();
  auto cfg = n.VfConfig(kVfioDevice, R"(,"vf":{"mac":"02:00:00:3b:00:03","vlan":200})");
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK(n.vfs.State(n.pf, 1).mac == "02:00:00:3b:00:03");
  CHECK(n.vfs.State(n.pf, 1).vlan == 200);
  CHECK(fake::DiffSnapshots(world_before, n.world.Snapshot()) == "");
  CHECK(n.world.mutating_calls() == 0);
  const json& iface = (*res)["interfaces"][0];
  CHECK(iface["name"] == "net1");
  CHECK(iface["pciID"] == kVfioPci);
  CHECK(iface["mac"] == "02:00:00:3b:00:03");
  CHECK(iface["sandbox"] == "/run/netns/pod");
  CHECK((*res)["ips"][0]["address"] == "10.9.0.150/24");
  CHECK((*res)["ips"][0]["interface"] == 0);
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());

  // Another pod asking for the same VF waits for this one.
  const int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);
  auto second = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == base::Code::kTryAgainLater);
  CHECK(second.error().msg.find("c1") != std::string::npos);

  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.vfs.State(n.pf, 1).mac == "00:00:00:00:00:00");
  CHECK(n.vfs.State(n.pf, 1).vlan == 0);
  CHECK(n.ipam.leases == 0);
  CHECK(n.StateFiles().empty());
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2")).ok());
}

TEST_CASE("a vfio-pci VF ADD that fails at the PF or IPAM leaves it as it was", "[engine][vf][rollback]") {
  VfNode n;
  const std::string before = n.Everything();
  n.vfs.FailCall(1);
  auto cfg = n.VfConfig(kVfioDevice, R"(,"vf":{"vlan":200})");
  REQUIRE_FALSE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.Everything() == before);
  CHECK(n.StateFiles().empty());
  n.ipam.fail_add = 1;
  REQUIRE_FALSE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.Everything() == before);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("CHECK fails when a VF setting was changed behind the pod's back", "[engine][vf]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  REQUIRE(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  netlink::VfState changed = n.vfs.State(n.pf, 0);
  changed.vlan = 101;
  n.vfs.SetState(n.pf, changed);
  auto s = n.Check(cfg, n.MakeEnv(cni::Command::kCheck));
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == base::Code::kCheckFailed);
  CHECK(s.error().msg.find("vlan 101") != std::string::npos);
}

TEST_CASE("a device that is not a VF is code 7 naming the key and mode move", "[engine][vf]") {
  VfNode n;
  const std::string before = n.Everything();
  for (const std::string& device :
       {std::string(R"({"pci":"0000:5e:00.0"})"), std::string(R"({"pci":"0000:3b:00.0"})"),
        std::string(R"({"name":"eth1"})")}) {
    INFO(device);
    auto res = n.Add(n.VfConfig(device, R"(,"vf":{"vlan":5})"), n.MakeEnv(cni::Command::kAdd));
    REQUIRE_FALSE(res.ok());
    CHECK(res.error().code == base::Code::kInvalidConfig);
    CHECK(res.error().msg.rfind("device.", 0) == 0);
    CHECK(res.error().msg.find("mode \"move\"") != std::string::npos);
  }
  CHECK(n.Everything() == before);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("a VF that another pod holds is code 11, one with no netdev and no owner is code 100",
          "[engine][vf]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfDevice);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  // Its netdev left the node's netns: sysfs no longer lists it there.
  n.sys.RemoveNetdev(kVfPci, "ens1f0v0");
  const int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);
  auto second = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == base::Code::kTryAgainLater);
  CHECK(second.error().msg.find("c1") != std::string::npos);

  VfNode m;
  m.sys.RemoveNetdev(kVfPci, "ens1f0v0");
  auto lost = m.Add(m.VfConfig(kVfDevice), m.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(lost.ok());
  CHECK(lost.error().code == base::Code::kDeviceNotFound);
  CHECK(lost.error().msg.find("mlx5_core") != std::string::npos);
}

TEST_CASE("DEL succeeds when the PF is gone, bringing the VF's netdev home", "[engine][vf]") {
  VfNode n;
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  n.world.DestroyLink(n.pf);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.world.NetnsOfLink(n.vf0) == fake::World::kRoot);
  CHECK(n.world.LinkByIndex(n.vf0)->name == "ens1f0v0");
  CHECK(n.world.LinkByIndex(n.vf0)->mac == "52:54:00:aa:00:02");
  CHECK(n.StateFiles().empty());
}

TEST_CASE("when the pod netns dies the VF's netdev comes home with the pod's MAC and DEL restores it",
          "[engine][vf]") {
  fake::VfWorld::PfSpec spec;
  spec.follow_mac = false;
  VfNode n(spec);
  const auto node_before = n.world.Snapshot().netns.at(fake::World::kRoot);
  const std::string vfs_before = n.vfs.Describe();
  auto cfg = n.VfConfig(kVfDevice, kSettings);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  n.world.DeleteNetns(n.pod_ns);
  n.opener.Forget("/run/netns/pod");
  // The kernel returned the netdev to the node under its pod-side name.
  CHECK(n.world.LinkByIndex(n.vf0)->name == "net1");
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.world.Snapshot().netns.at(fake::World::kRoot) == node_before);
  CHECK(n.vfs.Describe() == vfs_before);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("exclusive RDMA mode moves the VF's own RDMA device with its netdev", "[engine][vf][rdma]") {
  VfNode n;
  fake::RdmaWorld rdma{n.world, netlink::NetnsMode::kExclusive};
  fake::RdmaDeviceSpec spec;
  spec.name = "mlx5_2";
  spec.node_guid = "0011:2233:4455:6677";  // no GUID rule: sysfs pairs it
  const uint32_t dev = rdma.AddDevice(spec);
  n.sys.AddRdma(kVfPci, "mlx5_2");
  n.opener.EnableRdma(&rdma);
  const std::string before = n.Everything() + rdma.Describe();
  auto cfg = n.VfConfig(kVfDevice, R"(,"vf":{"vlan":5},"rdma":{"netnsMode":"exclusive"})");
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK(rdma.NetnsOfDevice(dev) == n.pod_ns);
  CHECK((*res)["interfaces"][0]["rdmaDevice"] == "mlx5_2");
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(rdma.NetnsOfDevice(dev) == fake::World::kRoot);
  CHECK(n.Everything() + rdma.Describe() == before);
}

TEST_CASE("an InfiniBand VF gets the runtime's GUID as node and port GUID, and DEL puts the old ones back",
          "[engine][vf]") {
  fake::VfWorld::PfSpec spec;
  spec.infiniband = true;
  VfNode n(spec);
  const std::string before = n.Everything();
  auto cfg = n.VfConfig(kVfioDevice, R"(,"runtimeConfig":{"infinibandGUID":"00:11:22:33:44:55:66:AA"})");
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK(n.vfs.State(n.pf, 1).node_guid == "00:11:22:33:44:55:66:aa");
  CHECK(n.vfs.State(n.pf, 1).port_guid == "00:11:22:33:44:55:66:aa");
  CHECK_FALSE((*res)["interfaces"][0].contains("mac"));
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.Everything() == before);
}

TEST_CASE("a setting whose old value the driver does not report stays, the others go back", "[engine][vf]") {
  fake::VfWorld::PfSpec spec;
  spec.reports_flags = false;  // spoofchk and trust are not reported
  VfNode n(spec);
  auto cfg = n.VfConfig(kVfDevice, R"(,"vf":{"vlan":9,"spoofchk":false})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.vfs.State(n.pf, 0).spoofchk == false);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.vfs.State(n.pf, 0).vlan == 0);
  CHECK(n.vfs.State(n.pf, 0).spoofchk == false);  // unknown before ADD: cannot be put back
  CHECK(n.world.NetnsOfLink(n.vf0) == fake::World::kRoot);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("STATUS counts a VF on vfio-pci as present though it has no netdev", "[engine][vf]") {
  VfNode n;
  auto status = [&](const std::string& device) {
    auto cfg = n.VfConfig(device);
    cni::Env env = n.MakeEnv(cni::Command::kStatus);
    cni::Context ctx{cfg, env, *n.host, n.opener, n.ipam};
    ctx.sysfs_root = n.sysfs_root;
    return cni::StatusCmd(ctx);
  };
  CHECK(status(kVfioDevice).ok());
  CHECK(status(kVfDevice).ok());
  auto missing = status(R"({"pci":"0000:99:00.1"})");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == base::Code::kNotAvailable);
}

TEST_CASE("a VF on vfio-pci with no settings to change is still CHECKed and deleted", "[engine][vf]") {
  VfNode n;
  const std::string before = n.Everything();
  std::string text = R"({"cniVersion":"1.1.0","name":"erdma","type":"erdma-cni","mode":"vf",)"
                     R"("device":{"pci":"0000:3b:00.3"},"dataDir":")" +
                     n.dir.path + "\"}";
  auto cfg = conf::Parse(cni::Modes(), text);
  REQUIRE(cfg.ok());
  auto res = n.Add(*cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK((*res)["interfaces"][0]["pciID"] == kVfioPci);
  CHECK_FALSE((*res)["interfaces"][0].contains("mac"));  // none set, the PF's is all zeros
  CHECK(n.vfs.mutating_calls() == 0);
  CHECK(n.Check(*cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(*cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.Everything() == before);
  CHECK(n.StateFiles().empty());
}

}  // namespace test_unit_vf_add_del_test
