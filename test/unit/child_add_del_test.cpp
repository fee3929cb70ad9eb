// macvlan and ipvlan children against the fake kernel: made in the pod under
// their final name, configured like a moved device, deleted on DEL, never
// touching the parent; rollback at every failure point.
#include "cni/driver/registry.h"
#include "test/unit/fake_node.h"

namespace test_unit_child_add_del_test {

using namespace fakenode;  // NOLINT(google-build-using-namespace): the shared fixture

namespace {

const std::string kMacvlan = R"(,"mode":"macvlan","macvlan":{"mode":"bridge"},"ipam":{"type":"fake-ipam"})";
const std::string kIpvlan = R"(,"mode":"ipvlan","ipvlan":{"mode":"l2"},"ipam":{"type":"fake-ipam"})";

std::optional<netlink::LinkInfo> PodLink(Node& n, int ns, const char* name) {
  auto link = n.world.Kernel(ns)->FindLink(name);
  REQUIRE(link.ok());
  return *link;
}

int AddPod(Node& n, const std::string& name) {
  const int id = n.world.AddNetns(name);
  n.opener.Map("/run/netns/" + name, id);
  n.world.AddLink(id, {0, "lo", "", 65536, true, ""});
  return id;
}

}  // namespace

TEST_CASE("a macvlan child is born in the pod under its final name with IPAM's address and policy routes",
          "[engine][child]") {
  Node n;
  const auto parent_before = n.world.LinkByIndex(n.eth1);
  auto cfg = n.Config(kMacvlan + R"(,"mtu":1400)");
  auto res = n.Add(cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  auto child = PodLink(n, n.pod_ns, "net1");
  REQUIRE(child);
  CHECK(child->kind == "macvlan");
  CHECK(child->up);
  CHECK(child->mtu == 1400);
  CHECK(child->mac != parent_before->mac);
  // The parent stays on the node, untouched.
  CHECK(n.world.NetnsOfLink(n.eth1) == fake::World::kRoot);
  CHECK(n.world.LinkByIndex(n.eth1) == parent_before);
  CHECK(HasRoute(n.world, n.pod_ns, "10.9.0.0/24", netlink::kTableMain, 200));
  CHECK(HasRoute(n.world, n.pod_ns, "0.0.0.0/0", 200, 0));
  CHECK((*res)["interfaces"][0]["name"] == "net1");
  CHECK((*res)["interfaces"][0]["mac"] == child->mac);
  CHECK((*res)["ips"][0]["address"] == "10.9.0.150/24");
  // Only IPAM ran; no rename dance: one create, then configuration.
  CHECK(n.world.calls().front().find("AddChildLink macvlan net1") != std::string::npos);
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck)).ok());
}

TEST_CASE("the complete state records the child's pod-side index in its journaled addresses and routes",
          "[engine][child]") {
  // The child's steps and the pod-side configuration enter the journal in
  // one write, before the child (and so its index) exists.
  Node n;
  REQUIRE(n.Add(n.Config(kMacvlan), n.MakeEnv(cni::Command::kAdd)).ok());
  auto child = PodLink(n, n.pod_ns, "net1");
  REQUIRE(child);
  REQUIRE(child->index != n.eth1);
  cni::StateStore store(n.dir.path, "erdma");
  auto paths = store.List();
  REQUIRE(paths.ok());
  REQUIRE(paths->size() == 1);
  auto st = store.Load(paths->front());
  REQUIRE(st.ok());
  REQUIRE(*st);
  CHECK((*st)->complete);
  int addrs = 0, routes = 0;
  for (const cni::Step& step : (*st)->steps) {
    if (const auto* a = std::get_if<cni::StepAddr>(&step)) {
      CHECK(a->addr.ifindex == child->index);
      ++addrs;
    } else if (const auto* r = std::get_if<cni::StepRoute>(&step)) {
      CHECK(r->route.oif == child->index);
      ++routes;
    }
  }
  CHECK(addrs == 1);
  CHECK(routes == 3);  // the subnet in main and in the policy table, the default route
}

TEST_CASE("DEL deletes the child, leaves the parent and releases the lease, a second DEL succeeds",
          "[engine][child]") {
  for (const std::string& mode : {kMacvlan, kIpvlan}) {
    INFO(mode);
    Node n;
    auto before = n.world.Snapshot();
    auto cfg = n.Config(mode);
    REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
    CHECK(n.StateFiles().empty());
    CHECK(n.ipam.leases == 0);
    REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  }
}

TEST_CASE("a child ADD that fails at any kernel call leaves node and pod exactly as before",
          "[engine][child][rollback]") {
  for (const std::string& mode : {kMacvlan, kIpvlan}) {
    const std::string extra = mode + R"(,"mtu":1400)";
    int total = 0;
    {
      Node n;
      REQUIRE(n.Add(n.Config(extra), n.MakeEnv(cni::Command::kAdd)).ok());
      total = n.world.mutating_calls();
    }
    REQUIRE(total >= 7);
    for (int fail = 1; fail <= total; ++fail) {
      INFO(mode << ": failing mutating call " << fail << " of " << total);
      Node n;
      auto before = n.world.Snapshot();
      n.world.FailCall(fail);
      auto res = n.Add(n.Config(extra), n.MakeEnv(cni::Command::kAdd));
      REQUIRE_FALSE(res.ok());
      CHECK(n.world.failure_fired());
      CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
      CHECK(n.StateFiles().empty());
      CHECK(n.ipam.leases == 0);
    }
  }
}

TEST_CASE("a child mtu above its parent's is code 7 naming mtu, the parent's MTU and the fix",
          "[engine][child]") {
  for (const std::string& mode : {kMacvlan, kIpvlan}) {
    INFO(mode);
    Node n;
    auto before = n.world.Snapshot();
    auto res = n.Add(n.Config(mode + R"(,"mtu":9000)"), n.MakeEnv(cni::Command::kAdd));
    REQUIRE_FALSE(res.ok());
    CHECK(res.error().code == base::Code::kInvalidConfig);
    CHECK_THAT(res.error().msg,
               Catch::StartsWith("mtu: 9000 is more than eth1's MTU, 1500,") &&
                   Catch::Contains("set mtu to at most 1500, or raise eth1's MTU on the node"));
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
    CHECK(n.StateFiles().empty());
    CHECK(n.ipam.leases == 0);
  }
}

TEST_CASE("a kernel without the child's link type is named with the module to load", "[engine][child]") {
  for (const std::string& kind : {std::string("macvlan"), std::string("ipvlan")}) {
    const std::string mode = kind == "macvlan" ? kMacvlan : kIpvlan;
    INFO(kind);
    // Which mutating call creates the child, from a run that succeeds.
    int create = 0;
    {
      Node n;
      const size_t start = n.world.calls().size();
      REQUIRE(n.Add(n.Config(mode), n.MakeEnv(cni::Command::kAdd)).ok());
      const auto& calls = n.world.calls();
      for (size_t i = start; i < calls.size() && !create; ++i)
        if (calls[i].find("AddChildLink") != std::string::npos) create = static_cast<int>(i - start) + 1;
    }
    REQUIRE(create > 0);
    Node n;
    auto before = n.world.Snapshot();
    n.world.FailCall(create, EOPNOTSUPP);  // rtnl_newlink: no such kind, and request_module found none
    auto res = n.Add(n.Config(mode), n.MakeEnv(cni::Command::kAdd));
    REQUIRE_FALSE(res.ok());
    CHECK(res.error().code == base::Code::kKernel);
    CHECK_THAT(res.error().msg, Catch::EndsWith("the node's kernel has no " + kind +
                                                " link type: its module is not loaded (`modprobe " + kind +
                                                "` on the node, or list it in /etc/modules-load.d/)"));
    CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
    CHECK(n.StateFiles().empty());
  }
}

TEST_CASE("many pods get children of one parent, and deleting one leaves the others", "[engine][child]") {
  Node n;
  const int pod2 = AddPod(n, "pod2");
  auto cfg = n.Config(kMacvlan);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c1")).ok());
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2")).ok());
  CHECK(PodLink(n, n.pod_ns, "net1"));
  CHECK(PodLink(n, pod2, "net1"));
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel, "c1")).ok());
  CHECK_FALSE(PodLink(n, n.pod_ns, "net1"));
  CHECK(PodLink(n, pod2, "net1"));
  CHECK(n.Check(cfg, n.MakeEnv(cni::Command::kCheck, "c2", "/run/netns/pod2")).ok());
}

TEST_CASE("a passthru macvlan takes the parent's MAC and a second one is refused with code 11",
          "[engine][child]") {
  Node n;
  const int pod2 = AddPod(n, "pod2");
  auto cfg = n.Config(R"(,"mode":"macvlan","macvlan":{"mode":"passthru"},"ipam":{"type":"fake-ipam"})");
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c1")).ok());
  CHECK(PodLink(n, n.pod_ns, "net1")->mac == n.world.LinkByIndex(n.eth1)->mac);
  auto before = n.world.Snapshot();
  auto second = n.Add(cfg, n.MakeEnv(cni::Command::kAdd, "c2", "/run/netns/pod2"));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == base::Code::kTryAgainLater);
  CHECK(second.error().msg.find("passthru") != std::string::npos);
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK_FALSE(PodLink(n, pod2, "net1"));
}

TEST_CASE("an ipvlan child shares the parent's MAC, macvlan takes the runtime's mac", "[engine][child]") {
  Node n;
  REQUIRE(n.Add(n.Config(kIpvlan), n.MakeEnv(cni::Command::kAdd, "c1")).ok());
  CHECK(PodLink(n, n.pod_ns, "net1")->mac == "00:16:3e:10:f8:b0");
  CHECK(PodLink(n, n.pod_ns, "net1")->kind == "ipvlan");

  Node m;
  auto cfg = m.Config(kMacvlan + R"(,"runtimeConfig":{"mac":"02:AA:bb:cc:dd:01"})");
  auto res = m.Add(cfg, m.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK(PodLink(m, m.pod_ns, "net1")->mac == "02:aa:bb:cc:dd:01");
  CHECK((*res)["interfaces"][0]["mac"] == "02:aa:bb:cc:dd:01");
}

TEST_CASE(
    "the MAC a pod asks for in CNI_ARGS reaches its child through the run's requests, also in a context made "
    "for a chosen device, and the config keeps its own",
    "[engine][child]") {
  Node n;
  const conf::Config cfg = n.Config(
      R"(,"mode":"macvlan","macvlan":{"mode":"bridge","mac":"02:00:00:00:00:0b"},"ipam":{"type":"fake-ipam"})");
  const cni::Env env = n.MakeEnv(cni::Command::kAdd);
  auto requests = conf::ReadPodRequests(cfg, {{"MAC", "02:AA:00:00:00:07"}});
  REQUIRE(requests.ok());
  cni::Context ctx{cfg, env, *n.host, n.opener, n.ipam};
  ctx.sysfs_root = n.sysfs_root;
  ctx.procfs_root = n.dir.path + "/noproc";
  ctx.lock_wait_ms = 100;
  ctx.requests = &*requests;
  CHECK(cni::PodMac(ctx) == "02:aa:00:00:00:07");
  const conf::Config chosen_cfg = cfg;
  cni::Context chosen = cni::ForAttachment(ctx, chosen_cfg, ctx.env);
  CHECK(&chosen.cfg == &chosen_cfg);
  CHECK(chosen.requests == ctx.requests);
  CHECK(chosen.sysfs_root == ctx.sysfs_root);
  CHECK(chosen.procfs_root == ctx.procfs_root);
  CHECK(chosen.lock_wait_ms == 100);
  auto res = cni::Add(chosen);
  REQUIRE(res.ok());
  CHECK(PodLink(n, n.pod_ns, "net1")->mac == "02:aa:00:00:00:07");
  CHECK((*res)["interfaces"][0]["mac"] == "02:aa:00:00:00:07");
  CHECK(cfg.mac == "02:00:00:00:00:0b");
  // Without the run's requests (DEL, CHECK) the config's MAC is the pod's; DEL leaves nothing.
  ctx.requests = nullptr;
  CHECK(cni::PodMac(ctx) == "02:00:00:00:00:0b");
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK_FALSE(PodLink(n, n.pod_ns, "net1"));
  CHECK(n.StateFiles().empty());
  CHECK(n.ipam.leases == 0);
}

TEST_CASE("DEL after the pod netns died removes the state: the child died with it", "[engine][child]") {
  Node n;
  auto cfg = n.Config(kMacvlan);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  n.world.DeleteNetns(n.pod_ns);
  auto before = n.world.Snapshot();
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(fake::DiffSnapshots(before, n.world.Snapshot()) == "");
  CHECK(n.StateFiles().empty());
  CHECK(n.ipam.leases == 0);
}

TEST_CASE("DEL leaves a link of the same name that is not the child it made", "[engine][child]") {
  Node n;
  auto cfg = n.Config(kMacvlan);
  REQUIRE(n.Add(cfg, n.MakeEnv(cni::Command::kAdd)).ok());
  auto child = PodLink(n, n.pod_ns, "net1");
  n.world.DestroyLink(child->index);
  const int impostor = n.world.AddLink(n.pod_ns, {0, "net1", "02:00:00:00:00:99", 1500, true, "veth"});
  REQUIRE(n.Del(cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(n.world.NetnsOfLink(impostor) == n.pod_ns);
}

TEST_CASE("children refuse exclusive RDMA mode, which would take the parent's device from the node",
          "[engine][child][rdma]") {
  Node n;
  fake::RdmaWorld rdma{n.world, netlink::NetnsMode::kExclusive};
  fake::RdmaDeviceSpec spec;
  spec.name = "erdma_0";
  spec.node_guid = "0216:3eff:fe10:f8b0";  // eth1's MAC by the eRDMA GUID rule
  rdma.AddDevice(spec);
  n.opener.EnableRdma(&rdma);
  const std::string before = n.world.Snapshot().Describe() + rdma.Describe();
  auto res =
      n.Add(n.Config(kMacvlan + R"(,"rdma":{"netnsMode":"exclusive"})"), n.MakeEnv(cni::Command::kAdd));
  REQUIRE_FALSE(res.ok());
  CHECK(res.error().code == base::Code::kInvalidConfig);
  CHECK(res.error().msg.find("rdma.netnsMode") != std::string::npos);
  CHECK(n.world.Snapshot().Describe() + rdma.Describe() == before);
  CHECK(n.StateFiles().empty());
}

TEST_CASE("in shared mode the parent's RDMA device serves the child and is named in the result",
          "[engine][child][rdma]") {
  Node n;
  fake::RdmaWorld rdma{n.world, netlink::NetnsMode::kShared};
  fake::RdmaDeviceSpec spec;
  spec.name = "erdma_0";
  spec.node_guid = "0216:3eff:fe10:f8b0";
  const uint32_t dev = rdma.AddDevice(spec);
  n.opener.EnableRdma(&rdma);
  std::string text =
      R"({"cniVersion":"1.1.0","name":"erdma","type":"erdma-cni","device":{"name":"eth1"},)"
      R"("mode":"ipvlan","ipam":{"type":"fake-ipam"},"rdma":{"netnsMode":"shared"},"dataDir":")" +
      n.dir.path + "\"}";
  auto cfg = conf::Parse(cni::Modes(), text);
  REQUIRE(cfg.ok());
  auto res = n.Add(*cfg, n.MakeEnv(cni::Command::kAdd));
  REQUIRE(res.ok());
  CHECK((*res)["interfaces"][0]["rdmaDevice"] == "erdma_0");
  CHECK(rdma.NetnsOfDevice(dev) == fake::World::kRoot);
  CHECK(n.Check(*cfg, n.MakeEnv(cni::Command::kCheck)).ok());
  REQUIRE(n.Del(*cfg, n.MakeEnv(cni::Command::kDel)).ok());
  CHECK(rdma.NetnsOfDevice(dev) == fake::World::kRoot);
}

}  // namespace test_unit_child_add_del_test
