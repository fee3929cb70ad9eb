// ADD and DEL against the in-memory fake kernel: rollback at every
// failure point, exact restore on DEL, the lost-netns and name-taken cases.
#include "cni/driver/registry.h"
#include "test/unit/fake_node.h"

namespace test_unit_add_del_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

TEST_CASE("ADD moves the device into the pod with its address, policy table and rule", "[engine]") {
  Node n;
  auto cfg = n.Config();
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK(n.world.NetnsOfLink(n.eth1) == n.pod_ns);
  CHECK(n.world.LinkByIndex(n.eth1)->name == "net1");
  CHECK(n.world.LinkByIndex(n.eth1)->up);
  CHECK(HasRoute(n.world, n.pod_ns, "10.9.0.0/24", netlink::kTableMain, 200));
  CHECK(HasRoute(n.world, n.pod_ns, "10.9.0.0/24", 200, 0));
  CHECK(HasRoute(n.world, n.pod_ns, "0.0.0.0/0", 200, 0));
  CHECK_FALSE(HasRoute(n.world, n.pod_ns, "10.9.0.0/24", netlink::kTableMain, 0));
  auto rules = n.world.Kernel(n.pod_ns)->ListRules();
  REQUIRE(rules.ok());
  bool rule = false;
  for (const auto& r : *rules)
    rule = rule || (r.priority == 200 && r.table == 200 && r.src == P("10.9.0.10/32"));
  CHECK(rule);
  CHECK((*res)["interfaces"][0]["name"] == "net1");
  CHECK((*res)["interfaces"][0]["mac"] == "00:16:3e:10:f8:b0");
  CHECK((*res)["ips"][0]["address"] == "10.9.0.10/24");
  CHECK((*res)["ips"][0]["gateway"] == "10.9.0.1");
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
}

TEST_CASE("DEL puts the device back exactly as it was and a second DEL succeeds", "[engine]") {
  Node n;
  auto before = n.world.Snapshot();
  auto cfg = n.Config(R"(,"mtu":9000)");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.world.LinkByIndex(n.eth1)->mtu == 9000);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK(n.StateFiles().empty());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
}

TEST_CASE("ADD that fails at any kernel call leaves the node and pod exactly as before",
          "[engine][rollback]") {
  for (const char* mode : {"inherit", "ipam"}) {
    std::string extra = std::string(R"(,"mtu":9000)") +
                        (std::string(mode) == "ipam" ? R"(,"ipam":{"type":"fake-ipam"})" : "");
    int total = 0;
    {
      Node n;
      REQUIRE(n.Add(n.Config(extra), n.MakeEnv(cni::Command::kAdd)).ok());
      total = n.world.mutating_calls();
    }
    REQUIRE(total >= 8);
    for (int fail = 1; fail <= total; ++fail) {
      INFO("mode " << mode << ", failing mutating call " << fail << " of " << total);
      Node n;
      auto before = n.world.Snapshot();
      n.world.FailCall(fail);
      auto res = n.Add(n.Config(extra), n.MakeEnv(cni::Command::kAdd));
      REQUIRE_FALSE(res.ok());
      CHECK(n.world.failure_fired());
      CHECK(res.error().code == base::Code::kKernel);
      CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
      CHECK(n.StateFiles().empty());
      CHECK(n.ipam.leases == 0);
    }
  }
}

TEST_CASE("a failing IPAM ADD leaves nothing behind", "[engine][rollback]") {
  Node n;
  n.ipam.fail_add = 1;
  auto before = n.world.Snapshot();
  auto res = n.Add(n.Config(R"(,"ipam":{"type":"fake-ipam"})"), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kIpam);
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK(n.StateFiles().empty());
  CHECK(n.ipam.calls == std::vector<std::string>{"fake-ipam ADD", "fake-ipam DEL"});
}

TEST_CASE("an IPAM DEL that fails keeps the state and names the two ways on: the next DEL and clear",
          "[engine]") {
  Node n;
  auto cfg = n.Config(R"(,"ipam":{"type":"fake-ipam"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  const auto states = n.StateFiles();
  REQUIRE_FALSE(states.empty());
  n.ipam.fail_del = 1;
  auto res = n.Del(cfg, n.MakeEnv(cni::Command::kDel));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kDelIncomplete);
  CHECK_THAT(res.error().msg, Catch::Contains("ipam store unreachable") &&
                                  Catch::Contains("the runtime's next DEL retries what is left") &&
                                  Catch::Contains("erdma-cni clear --container c1 --skip-ipam"));
  CHECK(n.StateFiles() == states);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.StateFiles().empty());
  CHECK(n.ipam.leases == 0);
}

TEST_CASE("a second pod asking for the same device gets code 11 naming the first container", "[engine]") {
  Node n;
  auto cfg = n.Config();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "first")).ok());
  int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "second", "/run/netns/pod2"));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kTryAgainLater);
  CHECK_THAT(res.error().msg, Catch::Contains("first"));
}

TEST_CASE("DEL after the pod netns died restores the device that came back under its pod-side name",
          "[engine]") {
  Node n;
  auto before = n.world.Snapshot();
  auto cfg = n.Config();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  n.world.DeleteNetns(n.pod_ns);
  n.opener.Forget("/run/netns/pod");
  CHECK(n.world.LinkByIndex(n.eth1)->name == "net1");
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.world.NetnsOfLink(n.eth1) == fake::World::kRoot);
  CHECK(n.world.LinkByIndex(n.eth1)->name == "eth1");
  // The root namespace is as before; the pod namespace is gone.
  auto after = n.world.Snapshot();
  CHECK(after.netns[0] == before.netns[0]);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("DEL with an empty CNI_NETNS uses the netns recorded at ADD", "[engine]") {
  Node n;
  auto before = n.world.Snapshot();
  auto cfg = n.Config();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel, "c1", "")).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
}

TEST_CASE("DEL keeps the state when the node name is taken, and finishes once it is free", "[engine]") {
  Node n;
  auto cfg = n.Config();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  int squatter = n.world.AddLink(fake::World::kRoot, {0, "eth1", "02:00:00:00:00:99", 1500, false, "veth"});
  auto res = n.Del(cfg, n.MakeEnv(cni::Command::kDel));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kNameTaken);
  CHECK_THAT(res.error().msg, Catch::Contains("eth1"));
  CHECK(n.world.NetnsOfLink(n.eth1) == n.pod_ns);  // not lost, not half-moved
  CHECK(n.StateFiles().size() == 2);
  n.world.DestroyLink(squatter);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.world.LinkByIndex(n.eth1)->name == "eth1");
  CHECK(n.StateFiles().empty());
}

TEST_CASE("DEL that fails at any kernel call keeps the state and a retry restores the node",
          "[engine][rollback]") {
  int total = 0;
  {
    Node n;
    auto cfg = n.Config();
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    n.world.ClearCalls();
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    total = n.world.mutating_calls();
  }
  REQUIRE(total >= 3);
  for (int fail = 1; fail <= total; ++fail) {
    INFO("failing DEL's mutating call " << fail << " of " << total);
    Node n;
    auto before = n.world.Snapshot();
    auto cfg = n.Config();
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    n.world.FailCall(fail);
    auto first = n.Del(cfg, n.MakeEnv(cni::Command::kDel));
    CHECK_FALSE(first.ok());
    CHECK_FALSE(n.StateFiles().empty());
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
    CHECK(n.StateFiles().empty());
  }
}

TEST_CASE("CHECK names what differs when a rule was removed behind our back", "[engine]") {
  Node n;
  auto cfg = n.Config();
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  auto pod = n.world.Kernel(n.pod_ns);
  netlink::RuleInfo rule{AF_INET, 200, P("10.9.0.10/32"), 200};
  REQUIRE(pod->DelRule(rule).ok());
  auto res = n.Check(cfg, n.MakeEnv(cni::Command::kCheck));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kCheckFailed);
  CHECK_THAT(res.error().msg, Catch::Contains("rule"));
}

namespace {

// The node of the tests above with an RDMA device paired to eth1 by the
// eRDMA GUID rule (its own PCI function: no port netdev, no sysfs link).
struct RdmaNode : Node {
  fake::RdmaWorld rdma{world, netlink::NetnsMode::kExclusive};
  uint32_t erdma;
  explicit RdmaNode(netlink::NetnsMode mode = netlink::NetnsMode::kExclusive) {
    rdma.SetMode(mode);
    fake::RdmaDeviceSpec spec;
    spec.name = "erdma_0";
    spec.node_guid = "0216:3eff:fe10:f8b0";  // from eth1's MAC 00:16:3e:10:f8:b0
    erdma = rdma.AddDevice(spec);
    opener.EnableRdma(&rdma);
  }
  std::string Everything() { return world.Snapshot().Describe() + rdma.Describe(); }
};

}  // namespace

TEST_CASE("exclusive mode moves the paired RDMA device into the pod and DEL returns it", "[engine][rdma]") {
  RdmaNode n;
  const std::string before = n.Everything();
  auto cfg = n.Config(R"(,"rdma":{"netnsMode":"exclusive"})");
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c1"));
  REQUIRE(res.ok());
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == n.pod_ns);
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == fake::World::kRoot);
  CHECK(n.Everything() == before);
}

TEST_CASE("the 1.1.0 result names the RDMA device the pod got", "[engine][rdma]") {
  RdmaNode n;
  std::string text = R"({"cniVersion":"1.1.0","name":"erdma","type":"erdma-cni","device":{"name":"eth1"},)"
                     R"("rdma":{},"dataDir":")" +
                     n.dir.path + "\"}";
  auto cfg = conf::Parse(cni::Modes(), text);
  REQUIRE(cfg.ok());
  auto res = n.Add(*cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK((*res)["interfaces"][0]["rdmaDevice"] == "erdma_0");
}

TEST_CASE("ADD with RDMA that fails at any kernel or RDMA call leaves everything as before",
          "[engine][rdma][rollback]") {
  const std::string extra = R"(,"rdma":{"netnsMode":"exclusive"})";
  int kernel_calls = 0, rdma_calls = 0;
  {
    RdmaNode n;
    REQUIRE(n.Add(n.Config(extra), n.MakeEnv(cni::Command::kAdd)).ok());
    kernel_calls = n.world.mutating_calls();
    rdma_calls = n.rdma.mutating_calls();
  }
  REQUIRE(rdma_calls == 1);
  for (int fail = 1; fail <= kernel_calls + rdma_calls; ++fail) {
    INFO("failing call " << fail << " (" << kernel_calls << " kernel, " << rdma_calls << " RDMA)");
    RdmaNode n;
    const std::string before = n.Everything();
    if (fail <= kernel_calls)
      n.world.FailCall(fail);
    else
      n.rdma.FailCall(fail - kernel_calls);
    auto res = n.Add(n.Config(extra), n.MakeEnv(cni::Command::kAdd));
    REQUIRE_FALSE(res.ok());
    CHECK(n.Everything() == before);
    CHECK(n.StateFiles().empty());
  }
}

TEST_CASE("an RDMA driver that cannot move gives a clear error and everything is rolled back",
          "[engine][rdma]") {
  RdmaNode n;
  fake::RdmaDeviceSpec spec;
  n.rdma.SetMode(netlink::NetnsMode::kExclusive);
  // Replace the device with one whose driver cannot move.
  n.world.DestroyLink(n.eth1);
  n.eth1 = n.world.AddLink(fake::World::kRoot, {0, "eth1", "00:16:3e:10:f8:b1", 1500, true, ""});
  spec.name = "rxe_old";
  spec.netdev_index = n.eth1;
  spec.can_move = false;
  n.rdma.AddDevice(spec);
  const std::string before = n.Everything();
  auto res = n.Add(n.Config(R"(,"rdma":{"netnsMode":"exclusive"})"), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kRdmaCannotMove);
  CHECK_THAT(res.error().msg, Catch::Contains("shared"));
  CHECK(n.Everything() == before);
}

TEST_CASE("a mode that differs from the kernel's is refused naming both modes and the boot-time fix",
          "[engine][rdma]") {
  RdmaNode n(netlink::NetnsMode::kShared);
  const std::string before = n.Everything();
  auto res = n.Add(n.Config(R"(,"rdma":{"netnsMode":"exclusive"})"), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kRdmaMode);
  CHECK_THAT(res.error().msg, Catch::Contains("exclusive") && Catch::Contains("shared"));
  res = n.Add(n.Config(R"(,"rdma":{"netnsMode":"exclusive","setSystemMode":true})"),
              n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kRdmaMode);
  CHECK_THAT(res.error().msg, Catch::Contains("EBUSY") && Catch::Contains("netns_mode=0"));
  CHECK(n.Everything() == before);
}

TEST_CASE("without RDMA in the kernel rdma.required decides between an error and a plain netdev",
          "[engine][rdma]") {
  Node n;  // no RDMA netlink at all
  auto res = n.Add(n.Config(R"(,"rdma":{})"), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kRdmaUnavailable);
  // The fix said once, naming the key that turns the error off.
  CHECK(res.error().msg ==
        "rdma: the node's kernel has no RDMA netlink (NETLINK_RDMA); load ib_core and the NIC's RDMA driver, "
        "or "
        "set rdma.required to false");
  CHECK(n.Add(n.Config(R"(,"rdma":{"required":false})"), n.MakeEnv(cni::Command::kAdd)).ok());
}

TEST_CASE("shared mode leaves the RDMA device on the node and reports it", "[engine][rdma]") {
  RdmaNode n(netlink::NetnsMode::kShared);
  auto cfg = n.Config(R"(,"rdma":{"netnsMode":"shared"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == fake::World::kRoot);
  CHECK(n.rdma.mutating_calls() == 0);
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
}

TEST_CASE("Soft-RoCE in shared mode is created on the pod's interface and deleted by DEL", "[engine][rdma]") {
  RdmaNode n(netlink::NetnsMode::kShared);
  const std::string before = n.Everything();
  auto cfg = n.Config(R"(,"rdma":{"softRoce":true})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  auto rxe = n.rdma.DeviceIndex("rxe_c1_net1");
  REQUIRE(rxe);
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK_FALSE(n.rdma.DeviceIndex("rxe_c1_net1"));
  CHECK(n.Everything() == before);
}

TEST_CASE("Soft-RoCE in exclusive mode is created then moved into the pod", "[engine][rdma]") {
  RdmaNode n;
  auto cfg = n.Config(R"(,"rdma":{"softRoce":true,"netnsMode":"exclusive"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  auto rxe = n.rdma.DeviceIndex("rxe_c1_net1");
  REQUIRE(rxe);
  CHECK(n.rdma.NetnsOfDevice(*rxe) == n.pod_ns);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK_FALSE(n.rdma.DeviceIndex("rxe_c1_net1"));
}

TEST_CASE("DEL after the pod netns died finds the RDMA device already home", "[engine][rdma]") {
  RdmaNode n;
  auto cfg = n.Config(R"(,"rdma":{"netnsMode":"exclusive"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  n.world.DeleteNetns(n.pod_ns);
  n.opener.Forget("/run/netns/pod");
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.rdma.NetnsOfDevice(n.erdma) == fake::World::kRoot);
  CHECK(n.world.LinkByIndex(n.eth1)->name == "eth1");
  CHECK(n.StateFiles().empty());
}

TEST_CASE("device.rdma and an eRDMA device plugin ID select the paired netdev", "[engine][rdma]") {
  for (const char* sel : {R"("device":{"rdma":"erdma_0"})", R"("deviceID":"erdma_0/17")"}) {
    INFO(sel);
    RdmaNode n;
    std::string text = std::string(R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni",)") + sel +
                       R"(,"rdma":{"netnsMode":"exclusive"},"dataDir":")" + n.dir.path + "\"}";
    auto cfg = conf::Parse(cni::Modes(), text);
    REQUIRE(cfg.ok());
    REQUIRE(n.Add(*cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    CHECK(n.world.NetnsOfLink(n.eth1) == n.pod_ns);
    CHECK(n.rdma.NetnsOfDevice(n.erdma) == n.pod_ns);
  }
}

TEST_CASE("CHECK fails when the pod lost its exclusive RDMA device", "[engine][rdma]") {
  RdmaNode n;
  auto cfg = n.Config(R"(,"rdma":{"netnsMode":"exclusive"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  REQUIRE(n.rdma.Rdma(n.pod_ns)->MoveDevice(n.erdma, fake::World::kRoot).ok());
  auto res = n.Check(cfg, n.MakeEnv(cni::Command::kCheck));
  REQUIRE_FALSE(res.ok());
  CHECK_THAT(res.error().msg, Catch::Contains("erdma_0"));
}

namespace {

// A node whose kernel has SMC; the pod's sysctls exist as on Alibaba Cloud
// Linux 3 (tcp2smc) unless a test says otherwise.
struct SmcNode : Node {
  fake::SmcWorld smc{world};
  explicit SmcNode(bool tcp2smc = true) {
    opener.EnableSmc(&smc);
    if (tcp2smc) opener.sysctls.Set(pod_ns, "net.smc.tcp2smc", "0");
    opener.sysctls.Set(pod_ns, "net.ipv6.conf.all.disable_ipv6", "0");
    opener.sysctls.Set(fake::World::kRoot, "net.smc.tcp2smc", "0");
  }
  std::string Everything() {
    return world.Snapshot().Describe() + smc.Describe() + opener.sysctls.Describe();
  }
};

const char* kAnnotated = R"(,"runtimeConfig":{"io.kubernetes.cri.pod-annotations":)"
                         R"({"network.alibabacloud.com/erdma-smcr":"true"}})";
// An explicit PNET ID: move mode then enters the interface in the pnet table.
const std::string kAnnotatedPnet = std::string(kAnnotated) + R"(,"smcr":{"pnetId":"00163E10F8B0"})";

}  // namespace

TEST_CASE("the erdma-smcr annotation turns on SMC-R in the pod only, and DEL turns it off",
          "[engine][smcr]") {
  SmcNode n;
  const std::string before = n.Everything();
  auto cfg = n.Config(kAnnotatedPnet);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.opener.sysctls.Get(n.pod_ns, "net.smc.tcp2smc") == "1");
  CHECK(n.opener.sysctls.Get(n.pod_ns, "net.ipv6.conf.all.disable_ipv6") == "1");
  CHECK(n.opener.sysctls.Get(fake::World::kRoot, "net.smc.tcp2smc") == "0");
  auto table = n.smc.PnetTable(n.pod_ns);
  REQUIRE(table.size() == 1);
  CHECK(table[0].pnet_id == "00163E10F8B0");
  CHECK(table[0].eth_name == "net1");
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.Everything() == before);
}

TEST_CASE("without the annotation SMC-R is left alone", "[engine][smcr]") {
  SmcNode n;
  REQUIRE(n.Add(n.Config(), n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.opener.sysctls.Get(n.pod_ns, "net.smc.tcp2smc") == "0");
  CHECK(n.smc.PnetTable(n.pod_ns).empty());
}

TEST_CASE("ADD with SMC-R that fails at any step leaves everything as before", "[engine][smcr][rollback]") {
  int kernel_calls = 0, smc_calls = 0, sysctl_writes = 0;
  {
    SmcNode n;
    REQUIRE(n.Add(n.Config(kAnnotatedPnet), n.MakeEnv(cni::Command::kAdd)).ok());
    kernel_calls = n.world.mutating_calls();
    smc_calls = n.smc.mutating_calls();
    sysctl_writes = n.opener.sysctls.writes();
  }
  REQUIRE(smc_calls == 1);
  REQUIRE(sysctl_writes == 2);
  for (int fail = 1; fail <= kernel_calls + smc_calls + sysctl_writes; ++fail) {
    INFO("failing call " << fail);
    SmcNode n;
    const std::string before = n.Everything();
    if (fail <= kernel_calls)
      n.world.FailCall(fail);
    else if (fail <= kernel_calls + smc_calls)
      n.smc.FailCall(fail - kernel_calls);
    else
      n.opener.sysctls.FailWrite(fail - kernel_calls - smc_calls);
    auto res = n.Add(n.Config(kAnnotatedPnet), n.MakeEnv(cni::Command::kAdd));
    REQUIRE_FALSE(res.ok());
    CHECK(n.Everything() == before);
    CHECK(n.StateFiles().empty());
  }
}

TEST_CASE("move mode leaves the pnet table alone with pnetId auto: the kernel pairs by netdev",
          "[engine][smcr]") {
  SmcNode n;
  REQUIRE(n.Add(n.Config(kAnnotated), n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.opener.sysctls.Get(n.pod_ns, "net.smc.tcp2smc") == "1");
  CHECK(n.smc.PnetTable(n.pod_ns).empty());
}

TEST_CASE("a kernel without tcp2smc fails ADD naming it, or warns with onUnsupported warn",
          "[engine][smcr]") {
  SmcNode n(/*tcp2smc=*/false);
  const std::string before = n.Everything();
  auto res = n.Add(n.Config(kAnnotated), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kSmcUnsupported);
  CHECK_THAT(res.error().msg, Catch::Contains("net.smc.tcp2smc") && Catch::Contains("Alibaba Cloud Linux 3"));
  CHECK(n.Everything() == before);
  auto cfg = n.Config(std::string(kAnnotated) + R"(,"smcr":{"onUnsupported":"warn"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.opener.sysctls.Get(n.pod_ns, "net.ipv6.conf.all.disable_ipv6") == "1");  // the rest still happens
}

TEST_CASE("without SMC in the kernel onUnsupported warn sets nothing of SMC-R, disable_ipv6 included",
          "[engine][smcr]") {
  Node n;  // no SMC netlink; the sysctls SMC-R would set exist
  n.opener.sysctls.Set(n.pod_ns, "net.ipv6.conf.all.disable_ipv6", "0");
  n.opener.sysctls.Set(n.pod_ns, "net.ipv4.tcp_ecn", "2");
  const std::string sysctls_before = n.opener.sysctls.Describe();
  auto cfg = n.Config(std::string(kAnnotated) +
                      R"(,"smcr":{"onUnsupported":"warn","sysctls":{"net.ipv4.tcp_ecn":"1"}})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  CHECK(n.opener.sysctls.writes() == 0);
  CHECK(n.opener.sysctls.Describe() == sysctls_before);
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  // With onUnsupported error the same pod's ADD fails, naming SMC, and changes nothing.
  auto strict = n.Add(n.Config(kAnnotated), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.error().code == base::Code::kSmcUnsupported);
  CHECK_THAT(strict.error().msg,
             Catch::Contains("kernel has no SMC") && Catch::Contains("nothing of SMC-R is set in this pod"));
  CHECK(n.opener.sysctls.writes() == 0);
}

TEST_CASE("a bad annotation value is code 7 naming the annotation", "[engine][smcr]") {
  std::string text = R"({"cniVersion":"1.0.0","name":"n","type":"erdma-cni","device":{"name":"eth1"},)"
                     R"("args":{"cni":{"erdma-smcr":"yes"}}})";
  auto cfg = conf::Parse(cni::Modes(), text);
  REQUIRE_FALSE(cfg.ok());
  CHECK(cfg.error().code == base::Code::kInvalidConfig);
  CHECK_THAT(cfg.error().msg, Catch::Contains("erdma-smcr"));
}

TEST_CASE("mode none applies SMC-R to the primary interface and passes prevResult through",
          "[engine][smcr]") {
  SmcNode n;
  n.world.AddLink(n.pod_ns, {0, "eth0", "02:00:00:00:00:05", 1500, true, "veth"});
  const std::string before = n.Everything();
  json prev = {{"cniVersion", "1.0.0"},
               {"interfaces", json::array({{{"name", "eth0"}, {"sandbox", "c1"}}})},
               {"ips", json::array({{{"address", "172.16.0.5/24"}, {"interface", 0}}})}};
  std::string text = R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","mode":"none",)"
                     R"("device":{"name":"eth1"},"dataDir":")" +
                     n.dir.path + "\"" + kAnnotated + R"(,"prevResult":)" + prev.dump() + "}";
  auto cfg = conf::Parse(cni::Modes(), text);
  REQUIRE(cfg.ok());
  cni::Env env = n.MakeEnv(cni::Command::kAdd);
  env.ifname = "eth0";
  auto res = n.Add(*cfg, env);
  REQUIRE(res.ok());
  CHECK(*res == prev);
  CHECK(n.world.NetnsOfLink(n.eth1) == fake::World::kRoot);  // nothing moved
  auto table = n.smc.PnetTable(n.pod_ns);
  REQUIRE(table.size() == 1);
  CHECK(table[0].eth_name == "eth0");
  CHECK(table[0].pnet_id == "00163E10F8B0");  // the eRDMA netdev's MAC
  env.command = cni::Command::kCheck;
  CHECK(n.Check(*cfg, env).ok());
  env.command = cni::Command::kDel;
  REQUIRE(n.Del(*cfg, env).ok());
  CHECK(n.Everything() == before);
}

TEST_CASE("the node-wide UEID stays while another attachment uses it", "[engine][smcr]") {
  SmcNode n;
  int pod2 = n.world.AddNetns("pod2");
  n.opener.Map("/run/netns/pod2", pod2);
  n.opener.sysctls.Set(pod2, "net.smc.tcp2smc", "0");
  n.opener.sysctls.Set(pod2, "net.ipv6.conf.all.disable_ipv6", "0");
  int eth2 = n.world.AddLink(fake::World::kRoot, {0, "eth2", "00:16:3e:10:f8:b2", 1500, true, ""});
  (void)eth2;
  const std::string smcr = std::string(kAnnotated) + R"(,"smcr":{"ueid":"ERDMA-SMC"})";
  auto cfg1 = n.Config(smcr);
  std::string text2 = R"({"cniVersion":"1.0.0","name":"erdma","type":"erdma-cni","device":{"name":"eth2"},)"
                      R"("dataDir":")" +
                      n.dir.path + "\"" + smcr + "}";
  auto cfg2 = conf::Parse(cni::Modes(), text2);
  REQUIRE(cfg2.ok());
  REQUIRE(n.Add(cfg1, n.MakeEnv(cni::Command::kAdd, "c1")).ok());
  REQUIRE(n.Add(*cfg2, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2")).ok());
  CHECK(n.smc.Ueids().size() == 1);
  REQUIRE(n.Del(cfg1, n.MakeEnv(cni::Command::kDel, "c1")).ok());
  CHECK(n.smc.Ueids().size() == 1);  // c2 still relies on it
  REQUIRE(n.Del(*cfg2, n.MakeEnv(cni::Command::kDel, "c2", "/run/netns/pod2")).ok());
  CHECK(n.smc.Ueids().empty());
}

}  // namespace test_unit_add_del_test
