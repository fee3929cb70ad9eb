// fake::RdmaWorld behaves as the kernel's RDMA core does (fake_rdma.h), so
// that tests written against it hold on a real kernel.
#include "test/fake/fake_rdma.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "test/fake/fake_kernel.h"

namespace test_unit_fake_rdma_test {

namespace {

using netlink::LinkInfo;
using netlink::NetnsMode;
using netlink::RdmaDevice;
using netlink::RdmaPort;

LinkInfo Link(const char* name, const char* mac) {
  LinkInfo l;
  l.name = name;
  l.mac = mac;
  l.up = true;
  return l;
}

std::vector<std::string> Names(netlink::Rdma& rdma) {
  auto devices = rdma.ListDevices();
  REQUIRE(devices.ok());
  std::vector<std::string> out;
  for (const RdmaDevice& d : *devices) out.push_back(d.name);
  return out;
}

/// A node with one eRDMA netdev and its RDMA device, and a pod namespace.
struct Node {
  fake::World world;
  int pod = world.AddNetns("pod");
  int eth1 = world.AddLink(fake::World::kRoot, Link("eth1", "00:16:3e:10:f8:b0"));
  fake::RdmaWorld rdma;
  uint32_t erdma = 0;

  explicit Node(NetnsMode mode) : rdma(world, mode) {
    fake::RdmaDeviceSpec spec;
    spec.name = "erdma_0";
    spec.netdev_index = eth1;
    erdma = rdma.AddDevice(spec);
  }
};

}  // namespace

TEST_CASE("in shared mode every namespace sees every device, the port netdev only where it lives", "[rdma]") {
  Node n(NetnsMode::kShared);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  auto pod = n.rdma.Rdma(n.pod);
  CHECK(Names(*root) == std::vector<std::string>{"erdma_0"});
  CHECK(Names(*pod) == std::vector<std::string>{"erdma_0"});
  CHECK(root->ListDevices()->front() == RdmaDevice{n.erdma, "erdma_0", "0216:3eff:fe10:f8b0", 1, "roce"});

  auto root_ports = root->ListPorts();
  REQUIRE(root_ports.ok());
  REQUIRE(root_ports->size() == 1);
  CHECK(root_ports->front() == RdmaPort{n.erdma, "erdma_0", 1, static_cast<uint32_t>(n.eth1), "eth1",
                                        netlink::kPortStateActive, netlink::kPhysStateLinkUp});
  auto pod_ports = pod->ListPorts();
  REQUIRE(pod_ports->size() == 1);
  CHECK(pod_ports->front().netdev_index == 0);
  CHECK(pod_ports->front().netdev_name.empty());

  // The netdev moves into the pod (and is renamed there): the pod sees it now.
  auto kroot = n.world.Kernel(fake::World::kRoot);
  auto kpod = n.world.Kernel(n.pod);
  REQUIRE(kroot->MoveLink(n.eth1, *kpod, "net1").ok());
  CHECK(root->ListPorts()->front().netdev_index == 0);
  CHECK(pod->ListPorts()->front().netdev_name == "net1");
}

TEST_CASE("in exclusive mode a namespace sees only its own devices", "[rdma]") {
  Node n(NetnsMode::kExclusive);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  auto pod = n.rdma.Rdma(n.pod);
  CHECK(Names(*root) == std::vector<std::string>{"erdma_0"});
  CHECK(Names(*pod).empty());
  CHECK(pod->ListPorts()->empty());
  REQUIRE(pod->GetNetnsMode().ok());
  CHECK(*pod->GetNetnsMode() == NetnsMode::kExclusive);
}

TEST_CASE("switching the netns mode fails with EBUSY while another namespace lives", "[rdma]") {
  Node n(NetnsMode::kShared);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  // Asking for the mode in force is fine even now.
  CHECK(root->SetNetnsMode(NetnsMode::kShared).ok());
  auto busy = root->SetNetnsMode(NetnsMode::kExclusive);
  REQUIRE_FALSE(busy.ok());
  CHECK(busy.error().sys_errno == EBUSY);
  CHECK(busy.error().code == base::Code::kKernel);
  CHECK(n.rdma.mode() == NetnsMode::kShared);

  n.world.DeleteNetns(n.pod);
  REQUIRE(root->SetNetnsMode(NetnsMode::kExclusive).ok());
  CHECK(*root->GetNetnsMode() == NetnsMode::kExclusive);
  CHECK(n.rdma.calls() == std::vector<std::string>{"root SetNetnsMode shared",
                                                   "root SetNetnsMode exclusive = EBUSY",
                                                   "root SetNetnsMode exclusive"});
}

TEST_CASE("in exclusive mode a device moves into a namespace and back", "[rdma]") {
  Node n(NetnsMode::kExclusive);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  auto pod = n.rdma.Rdma(n.pod);
  REQUIRE(root->MoveDevice(n.erdma, n.pod).ok());
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == n.pod);
  CHECK(Names(*root).empty());
  CHECK(Names(*pod) == std::vector<std::string>{"erdma_0"});
  // The root handle cannot see it any more, so cannot move it either.
  auto lost = root->MoveDevice(n.erdma, fake::World::kRoot);
  REQUIRE_FALSE(lost.ok());
  CHECK(lost.error().sys_errno == EINVAL);
  REQUIRE(pod->MoveDevice(n.erdma, fake::World::kRoot).ok());
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == fake::World::kRoot);
  CHECK(n.rdma.calls() == std::vector<std::string>{"root MoveDevice 1 -> pod",
                                                   "root MoveDevice 1 -> root = EINVAL",
                                                   "pod MoveDevice 1 -> root"});
}

TEST_CASE("moving fails with EOPNOTSUPP in shared mode and for a driver that cannot move", "[rdma]") {
  SECTION("shared mode") {
    Node n(NetnsMode::kShared);
    const std::string before = n.rdma.Describe();
    auto r = n.rdma.Rdma(fake::World::kRoot)->MoveDevice(n.erdma, n.pod);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().sys_errno == EOPNOTSUPP);
    CHECK(n.rdma.Describe() == before);
  }
  SECTION("a device without disassociate_ucontext") {
    Node n(NetnsMode::kExclusive);
    fake::RdmaDeviceSpec old_rxe;
    old_rxe.name = "rxe9";
    old_rxe.can_move = false;
    const uint32_t index = n.rdma.AddDevice(old_rxe);
    const std::string before = n.rdma.Describe();
    auto r = n.rdma.Rdma(fake::World::kRoot)->MoveDevice(index, n.pod);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().sys_errno == EOPNOTSUPP);
    CHECK(n.rdma.Describe() == before);
  }
}

TEST_CASE("moving to something that is no namespace is EBADF, to a deleted one ENODEV", "[rdma]") {
  Node n(NetnsMode::kExclusive);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  CHECK(root->MoveDevice(n.erdma, 99).error().sys_errno == EBADF);
  CHECK(root->MoveDevice(n.erdma, -1).error().sys_errno == EBADF);
  n.world.DeleteNetns(n.pod);
  CHECK(root->MoveDevice(n.erdma, n.pod).error().sys_errno == ENODEV);
  CHECK(root->MoveDevice(12345, fake::World::kRoot).error().sys_errno == EINVAL);
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == fake::World::kRoot);
}

TEST_CASE("deleting a namespace sends its RDMA devices back to root", "[rdma]") {
  Node n(NetnsMode::kExclusive);
  auto pod = n.rdma.Rdma(n.pod);
  REQUIRE(n.rdma.Rdma(fake::World::kRoot)->MoveDevice(n.erdma, n.pod).ok());
  n.world.DeleteNetns(n.pod);
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == fake::World::kRoot);
  CHECK(Names(*n.rdma.Rdma(fake::World::kRoot)) == std::vector<std::string>{"erdma_0"});
  // A handle left bound to the dead namespace sees nothing and moves nothing.
  CHECK(Names(*pod).empty());
  CHECK(pod->MoveDevice(n.erdma, fake::World::kRoot).error().sys_errno == EINVAL);
}

TEST_CASE("a soft device is made on a netdev of the caller's namespace and deleted again", "[rdma]") {
  Node n(NetnsMode::kShared);
  const int veth = n.world.AddLink(n.pod, Link("eth0", "0a:58:0a:00:00:05"));
  auto pod = n.rdma.Rdma(n.pod);
  REQUIRE(pod->AddSoftDevice("rxe_eth0", "rxe", "eth0").ok());
  const auto index = n.rdma.DeviceIndex("rxe_eth0");
  REQUIRE(index);
  CHECK(*index > n.erdma);
  CHECK(n.rdma.NetnsOfDevice(*index) == fake::World::kRoot);
  auto devices = pod->ListDevices();
  REQUIRE(devices->size() == 2);
  CHECK(devices->back() == RdmaDevice{*index, "rxe_eth0", "0858:0aff:fe00:0005", 1, "roce"});
  auto ports = pod->ListPorts();
  REQUIRE(ports->size() == 2);
  CHECK(ports->back().netdev_index == static_cast<uint32_t>(veth));
  CHECK(ports->back().netdev_name == "eth0");

  REQUIRE(pod->DelDevice(*index).ok());
  CHECK_FALSE(n.rdma.DeviceIndex("rxe_eth0"));
  CHECK(n.rdma.calls() ==
        std::vector<std::string>{"pod AddSoftDevice rxe_eth0 type rxe netdev eth0", "pod DelDevice 2"});
}

TEST_CASE("a soft device dies when its netdev leaves its namespace or is destroyed", "[rdma]") {
  Node n(NetnsMode::kShared);
  const int veth = n.world.AddLink(n.pod, Link("eth0", "0a:58:0a:00:00:05"));
  auto pod = n.rdma.Rdma(n.pod);
  REQUIRE(pod->AddSoftDevice("rxe0", "rxe", "eth0").ok());
  auto kpod = n.world.Kernel(n.pod);
  auto kroot = n.world.Kernel(fake::World::kRoot);
  REQUIRE(kpod->MoveLink(veth, *kroot, "eth0").ok());
  CHECK_FALSE(n.rdma.DeviceIndex("rxe0"));

  REQUIRE(n.rdma.Rdma(fake::World::kRoot)->AddSoftDevice("rxe1", "rxe", "eth0").ok());
  REQUIRE(n.rdma.DeviceIndex("rxe1"));
  n.world.DestroyLink(veth);
  CHECK_FALSE(n.rdma.DeviceIndex("rxe1"));
}

TEST_CASE("making a soft device fails as the kernel does", "[rdma]") {
  Node n(NetnsMode::kShared);
  n.world.AddLink(n.pod, Link("eth0", "0a:58:0a:00:00:05"));
  auto pod = n.rdma.Rdma(n.pod);
  auto errno_of = [&](const char* name, const char* type, const char* netdev) {
    auto r = pod->AddSoftDevice(name, type, netdev);
    return r.ok() ? 0 : r.error().sys_errno;
  };
  CHECK(errno_of("rxe0", "rxe", "eth1") == ENODEV);  // eth1 is root's, not the pod's
  CHECK(errno_of("rxe0", "mlx5", "eth0") == EINVAL);
  CHECK(errno_of("rxe%d", "rxe", "eth0") == EINVAL);
  CHECK(errno_of("erdma_0", "rxe", "eth0") == ENFILE);
  CHECK(errno_of("rxe0", "rxe", "eth0") == 0);
  CHECK(errno_of("rxe1", "rxe", "eth0") == EEXIST);
}

TEST_CASE("only soft devices can be deleted", "[rdma]") {
  Node n(NetnsMode::kShared);
  auto r = n.rdma.Rdma(fake::World::kRoot)->DelDevice(n.erdma);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().sys_errno == EINVAL);
  CHECK(n.rdma.DeviceIndex("erdma_0"));
}

TEST_CASE("soft devices follow the move ability set for them", "[rdma]") {
  Node n(NetnsMode::kExclusive);
  n.rdma.SetSoftDevicesCanMove(false);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  REQUIRE(root->AddSoftDevice("rxe0", "rxe", "eth1").ok());
  CHECK(root->MoveDevice(*n.rdma.DeviceIndex("rxe0"), n.pod).error().sys_errno == EOPNOTSUPP);
  n.rdma.SetSoftDevicesCanMove(true);
  REQUIRE(n.world.AddLink(fake::World::kRoot, Link("eth2", "00:16:3e:00:00:02")) > 0);
  REQUIRE(root->AddSoftDevice("rxe2", "rxe", "eth2").ok());
  CHECK(root->MoveDevice(*n.rdma.DeviceIndex("rxe2"), n.pod).ok());
}

TEST_CASE("an injected failure hits the Nth mutating call only, changes nothing and is logged", "[rdma]") {
  Node n(NetnsMode::kExclusive);
  auto root = n.rdma.Rdma(fake::World::kRoot);
  const std::string before = n.rdma.Describe();
  n.rdma.FailCall(2, EPERM);
  REQUIRE(root->GetNetnsMode().ok());  // reads are not counted
  REQUIRE(root->ListDevices().ok());
  REQUIRE(root->AddSoftDevice("rxe0", "rxe", "eth1").ok());
  const std::string after_add = n.rdma.Describe();
  auto failed = root->MoveDevice(n.erdma, n.pod);
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().sys_errno == EPERM);
  CHECK(failed.error().details == "fake: injected");
  CHECK(n.rdma.failure_fired());
  CHECK(n.rdma.Describe() == after_add);
  CHECK(after_add != before);
  REQUIRE(root->MoveDevice(n.erdma, n.pod).ok());
  CHECK(n.rdma.mutating_calls() == 3);
  CHECK(n.rdma.calls() == std::vector<std::string>{"root AddSoftDevice rxe0 type rxe netdev eth1",
                                                   "root MoveDevice 1 -> pod = EPERM (injected)",
                                                   "root MoveDevice 1 -> pod"});
}

}  // namespace test_unit_fake_rdma_test
