#include "test/fake/fake_kernel.h"

#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

namespace test_unit_fake_kernel_test {

namespace {

using netlink::AddrInfo;
using netlink::IpAddress;
using netlink::IpPrefix;
using netlink::LinkInfo;
using netlink::RouteInfo;
using netlink::RuleInfo;

IpPrefix Prefix(const char* s) { return *IpPrefix::Parse(s); }
IpAddress Addr(const char* s) { return *IpAddress::Parse(s); }

LinkInfo Link(const char* name, bool up = true, const char* kind = "") {
  LinkInfo l;
  l.name = name;
  l.mac = "02:00:00:00:00:01";
  l.mtu = 1500;
  l.up = up;
  l.kind = kind;
  return l;
}

AddrInfo Address(int ifindex, const char* prefix, uint32_t flags = 0) {
  AddrInfo a;
  a.ifindex = ifindex;
  a.local = Prefix(prefix);
  a.flags = flags;
  return a;
}

RouteInfo Route(const char* dst, int oif, const char* via = nullptr) {
  RouteInfo r;
  r.dst = Prefix(dst);
  r.oif = oif;
  if (via) r.gateway = Addr(via);
  return r;
}

RouteInfo KernelPrefixRoute(const char* dst, int oif, const char* src) {
  RouteInfo r = Route(dst, oif);
  r.protocol = netlink::kProtoKernel;
  r.scope = netlink::kScopeLink;
  r.prefsrc = Addr(src);
  return r;
}

RuleInfo Rule(uint32_t priority, const char* from, uint32_t table) {
  RuleInfo r;
  r.family = AF_INET;
  r.priority = priority;
  if (from) r.src = Prefix(from);
  r.table = table;
  return r;
}

template <typename T>
std::vector<T> Get(base::Result<std::vector<T>> r) {
  REQUIRE(r.ok());
  return std::move(r).value();
}

int ErrnoOf(const base::Status& s) {
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == base::Code::kKernel);
  return s.error().sys_errno;
}

// A host link with an address, a route through it and a rule: the shape a
// test wants to see torn down or left alone.
struct HostWithPod {
  fake::World world;
  int pod = world.AddNetns("pod");
  int eth1 = world.AddLink(fake::World::kRoot, Link("eth1"));
  std::unique_ptr<netlink::Kernel> host = world.Kernel(fake::World::kRoot);
  std::unique_ptr<netlink::Kernel> pod_k = world.Kernel(pod);

  HostWithPod() {
    REQUIRE(host->AddAddr(Address(eth1, "10.9.0.5/24")).ok());
    REQUIRE(host->AddRoute(Route("10.20.0.0/16", eth1, "10.9.0.1")).ok());
    REQUIRE(host->AddRule(Rule(100, "10.9.0.5/32", 100)).ok());
  }
};

TEST_CASE("move flushes addresses and routes and brings the link down", "[fake_kernel]") {
  HostWithPod t;
  REQUIRE(t.host->MoveLink(t.eth1, *t.pod_k, "erdma0").ok());

  CHECK(t.world.NetnsOfLink(t.eth1) == t.pod);
  auto moved = t.pod_k->FindLink("erdma0");
  REQUIRE(moved.ok());
  REQUIRE(moved->has_value());
  CHECK((*moved)->index == t.eth1);
  CHECK_FALSE((*moved)->up);
  CHECK((*moved)->mtu == 1500);
  CHECK((*moved)->mac == "02:00:00:00:00:01");
  CHECK(Get(t.pod_k->ListAddrs(0)).empty());
  CHECK(Get(t.pod_k->ListRoutes(0)).empty());
  CHECK(Get(t.host->ListAddrs(0)).empty());
  CHECK(Get(t.host->ListRoutes(0)).empty());
  CHECK_FALSE(t.host->FindLinkByIndex(t.eth1)->has_value());
  // Rules do not belong to a link: the host keeps its own.
  CHECK(Get(t.host->ListRules()).size() == 6);
  CHECK(t.world.calls().back() == "root MoveLink " + std::to_string(t.eth1) + " -> pod as erdma0");

  // A link missing from the source namespace.
  CHECK(ErrnoOf(t.host->MoveLink(t.eth1, *t.pod_k, "x")) == ENODEV);
}

TEST_CASE("move into a namespace where the name is taken fails with EEXIST and changes nothing",
          "[fake_kernel]") {
  HostWithPod t;
  t.world.AddLink(t.pod, Link("erdma0"));
  const fake::Snapshot before = t.world.Snapshot();

  base::Status s = t.host->MoveLink(t.eth1, *t.pod_k, "erdma0");
  CHECK(ErrnoOf(s) == EEXIST);
  CHECK(s.error().details.empty());
  CHECK(s.error().msg.find("File exists") != std::string::npos);
  CHECK(DiffSnapshots(before, t.world.Snapshot()) == "");
  CHECK(t.world.calls().back().ends_with(" = EEXIST"));

  // Without a new name the link keeps its own, which is free in the pod.
  REQUIRE(t.host->MoveLink(t.eth1, *t.pod_k, "").ok());
  CHECK(t.pod_k->FindLink("eth1")->has_value());
}

TEST_CASE(
    "deleting a namespace returns a physical link under its pod-side name and destroys a veth and "
    "its peer",
    "[fake_kernel]") {
  fake::World world;
  const int pod = world.AddNetns("pod");
  const int eth1 = world.AddLink(fake::World::kRoot, Link("eth1"));
  const int eth2 = world.AddLink(fake::World::kRoot, Link("eth2"));
  auto [veth_host, veth_pod] = world.AddVeth(fake::World::kRoot, Link("veth1234"), pod, Link("eth0"));
  const int pod_lo = world.AddLink(pod, Link("lo"));
  auto host = world.Kernel(fake::World::kRoot);
  auto pod_k = world.Kernel(pod);
  REQUIRE(host->AddAddr(Address(veth_host, "169.254.1.1/32")).ok());
  REQUIRE(host->AddRoute(Route("10.9.0.7/32", veth_host)).ok());
  REQUIRE(host->MoveLink(eth1, *pod_k, "erdma0").ok());
  REQUIRE(host->MoveLink(eth2, *pod_k, "erdma1").ok());
  // The host now has another device named erdma1: eth2 cannot come back under it.
  world.AddLink(fake::World::kRoot, Link("erdma1"));
  REQUIRE(pod_k->SetUp(eth1, true).ok());
  REQUIRE(pod_k->AddAddr(Address(eth1, "10.9.0.7/24")).ok());
  REQUIRE(pod_k->AddRule(Rule(100, nullptr, 100)).ok());

  world.DeleteNetns(pod);

  CHECK_FALSE(world.NetnsAlive(pod));
  auto back = world.LinkByIndex(eth1);
  REQUIRE(back);
  CHECK(world.NetnsOfLink(eth1) == fake::World::kRoot);
  CHECK(back->name == "erdma0");
  CHECK_FALSE(back->up);
  CHECK(Get(host->ListAddrs(eth1)).empty());
  CHECK(Get(host->ListRoutes(eth1)).empty());
  CHECK(world.LinkByIndex(eth2)->name == "dev" + std::to_string(eth2));
  CHECK(world.NetnsOfLink(veth_pod) == -1);
  CHECK(world.NetnsOfLink(veth_host) == -1);
  CHECK(world.NetnsOfLink(pod_lo) == -1);  // loopback dies with its namespace
  CHECK(Get(host->ListAddrs(0)).empty());
  CHECK(Get(host->ListRoutes(0)).empty());
  CHECK(world.Snapshot().veth_peers.empty());

  // The handle on the dead namespace sees nothing and cannot add anything.
  CHECK(Get(pod_k->ListLinks()).empty());
  CHECK(Get(pod_k->ListRules()).empty());
  CHECK(ErrnoOf(pod_k->SetUp(eth1, false)) == ENODEV);
  CHECK(ErrnoOf(pod_k->AddRule(Rule(100, nullptr, 100))) == ENODEV);
  CHECK(ErrnoOf(pod_k->DelRule(Rule(100, nullptr, 100))) == ENOENT);
  CHECK(ErrnoOf(host->MoveLink(eth1, *pod_k, "erdma0")) == ENODEV);

  // Loopback never changes namespace.
  const int lo = world.AddLink(fake::World::kRoot, Link("lo"));
  const int pod2 = world.AddNetns("pod2");
  CHECK(ErrnoOf(host->MoveLink(lo, *world.Kernel(pod2), "lo")) == EINVAL);
}

TEST_CASE("prefix route appears and disappears with the address and NOPREFIXROUTE suppresses it",
          "[fake_kernel]") {
  fake::World world;
  const int eth1 = world.AddLink(fake::World::kRoot, Link("eth1", /*up=*/false));
  auto k = world.Kernel(fake::World::kRoot);

  // On a down link the address waits; the route comes with the link.
  REQUIRE(k->AddAddr(Address(eth1, "10.9.0.5/24")).ok());
  CHECK(Get(k->ListRoutes(0)).empty());
  REQUIRE(k->SetUp(eth1, true).ok());
  CHECK(Get(k->ListRoutes(0)) == std::vector<RouteInfo>{KernelPrefixRoute("10.9.0.0/24", eth1, "10.9.0.5")});

  // IPv6: metric 256, no scope or src; NOPREFIXROUTE: none at all.
  REQUIRE(k->AddAddr(Address(eth1, "fd00::5/64")).ok());
  REQUIRE(k->AddAddr(Address(eth1, "10.30.0.5/24", netlink::kAddrFlagNoPrefixRoute)).ok());
  RouteInfo v6 = Route("fd00::/64", eth1);
  v6.protocol = netlink::kProtoKernel;
  v6.metric = 256;
  CHECK(Get(k->ListRoutes(eth1)) ==
        std::vector<RouteInfo>{KernelPrefixRoute("10.9.0.0/24", eth1, "10.9.0.5"), v6});

  // Down takes every route through the link, static ones too; up restores
  // only the prefix routes.
  REQUIRE(k->AddRoute(Route("10.20.0.0/16", eth1, "10.9.0.1")).ok());
  REQUIRE(k->SetUp(eth1, false).ok());
  CHECK(Get(k->ListRoutes(0)).empty());
  CHECK(Get(k->ListAddrs(eth1)).size() == 3);
  REQUIRE(k->SetUp(eth1, true).ok());
  CHECK(Get(k->ListRoutes(0)).size() == 2);

  REQUIRE(k->DelAddr(Address(eth1, "10.9.0.5/24")).ok());
  REQUIRE(k->DelAddr(Address(eth1, "fd00::5/64")).ok());
  CHECK(Get(k->ListRoutes(0)).empty());
  CHECK(ErrnoOf(k->DelAddr(Address(eth1, "10.9.0.5/24"))) == EADDRNOTAVAIL);
  CHECK(ErrnoOf(k->DelAddr(Address(eth1, "10.30.0.5/16"))) == EADDRNOTAVAIL);
  CHECK(ErrnoOf(k->AddAddr(Address(999, "10.9.0.5/24"))) == ENODEV);
}

TEST_CASE("deleting an IPv4 address removes the routes that use it as prefsrc", "[fake_kernel]") {
  fake::World world;
  const int eth1 = world.AddLink(fake::World::kRoot, Link("eth1"));
  const int eth2 = world.AddLink(fake::World::kRoot, Link("eth2"));
  auto k = world.Kernel(fake::World::kRoot);
  REQUIRE(k->AddAddr(Address(eth1, "10.9.0.5/24")).ok());
  REQUIRE(k->AddAddr(Address(eth2, "10.8.0.5/24")).ok());
  RouteInfo r = Route("10.20.0.0/16", eth2, "10.8.0.1");
  r.prefsrc = Addr("10.9.0.5");
  REQUIRE(k->AddRoute(r).ok());

  REQUIRE(k->DelAddr(Address(eth1, "10.9.0.5/24")).ok());
  CHECK(Get(k->ListRoutes(0)) == std::vector<RouteInfo>{KernelPrefixRoute("10.8.0.0/24", eth2, "10.8.0.5")});
  // And a prefsrc that is no local address is refused.
  CHECK(ErrnoOf(k->AddRoute(r)) == EINVAL);
}

TEST_CASE("FailCall(n) fails exactly the n-th mutating call and leaves the snapshot unchanged",
          "[fake_kernel]") {
  // The sequence an ADD might run; `step` sees the world before each call.
  auto run = [](fake::World& w, const std::function<void()>& step) -> base::Status {
    const int pod = 1, eth1 = 1;
    auto host = w.Kernel(fake::World::kRoot);
    auto pod_k = w.Kernel(pod);
    step();
    RETURN_IF_ERROR(host->MoveLink(eth1, *pod_k, "erdma0"));
    step();
    RETURN_IF_ERROR(pod_k->SetMtu(eth1, 9000));
    step();
    RETURN_IF_ERROR(pod_k->SetUp(eth1, true));
    step();
    RETURN_IF_ERROR(pod_k->AddAddr(Address(eth1, "10.9.0.7/24")));
    step();
    RETURN_IF_ERROR(pod_k->AddRoute(Route("10.20.0.0/16", eth1, "10.9.0.1")));
    step();
    RETURN_IF_ERROR(pod_k->AddRule(Rule(100, "10.9.0.7/32", 100)));
    return base::Ok();
  };
  auto setup = [](fake::World& w) {
    REQUIRE(w.AddNetns("pod") == 1);
    REQUIRE(w.AddLink(fake::World::kRoot, Link("eth1")) == 1);
  };

  // Without a failure: the state before each call.
  std::vector<fake::Snapshot> before_call;
  {
    fake::World w;
    setup(w);
    REQUIRE(run(w, [&] { before_call.push_back(w.Snapshot()); }).ok());
    REQUIRE(w.mutating_calls() == 6);
    REQUIRE(w.calls().size() == 6);
    CHECK_FALSE(w.failure_fired());
  }
  for (int n = 1; n <= 6; ++n) {
    CAPTURE(n);
    fake::World w;
    setup(w);
    w.FailCall(n, ENOBUFS);
    base::Status s = run(w, [] {});
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().code == base::Code::kKernel);
    CHECK(s.error().sys_errno == ENOBUFS);
    CHECK(s.error().details == "fake: injected");
    CHECK(w.failure_fired());
    CHECK(w.mutating_calls() == n);
    CHECK(w.calls().back().ends_with(" = ENOBUFS (injected)"));
    CHECK(DiffSnapshots(before_call[n - 1], w.Snapshot()) == "");
  }

  // Counting starts when FailCall is set; the failure is one-shot.
  fake::World w;
  setup(w);
  auto host = w.Kernel(fake::World::kRoot);
  REQUIRE(host->SetMtu(1, 1400).ok());
  w.FailCall(2);
  CHECK(host->SetMtu(1, 1450).ok());
  CHECK(ErrnoOf(host->SetMtu(1, 1460)) == EIO);
  CHECK(host->SetMtu(1, 1470).ok());
  CHECK(w.LinkByIndex(1)->mtu == 1470);
  CHECK(w.calls() == std::vector<std::string>{"root SetMtu 1 1400", "root SetMtu 1 1450",
                                              "root SetMtu 1 1460 = EIO (injected)", "root SetMtu 1 1470"});
  // ClearFailure disarms a pending one.
  w.FailCall(1);
  w.ClearFailure();
  CHECK(host->SetMtu(1, 1500).ok());
}

TEST_CASE("duplicate addresses, routes and rules fail with EEXIST", "[fake_kernel]") {
  HostWithPod t;
  const fake::Snapshot before = t.world.Snapshot();
  CHECK(ErrnoOf(t.host->AddAddr(Address(t.eth1, "10.9.0.5/24"))) == EEXIST);
  CHECK(ErrnoOf(t.host->AddRoute(Route("10.20.0.0/16", t.eth1, "10.9.0.1"))) == EEXIST);
  // Same table, dst and metric is the same route whatever the nexthop.
  CHECK(ErrnoOf(t.host->AddRoute(Route("10.20.0.0/16", t.eth1, "10.9.0.2"))) == EEXIST);
  CHECK(ErrnoOf(t.host->AddRule(Rule(100, "10.9.0.5/32", 100))) == EEXIST);
  CHECK(DiffSnapshots(before, t.world.Snapshot()) == "");

  // Another metric, another table or another priority is a new entry.
  RouteInfo other_metric = Route("10.20.0.0/16", t.eth1, "10.9.0.1");
  other_metric.metric = 10;
  CHECK(t.host->AddRoute(other_metric).ok());
  CHECK(t.host->AddRule(Rule(101, "10.9.0.5/32", 100)).ok());
  // IPv4 allows the same local address with another mask.
  CHECK(t.host->AddAddr(Address(t.eth1, "10.9.0.5/16")).ok());
}

TEST_CASE("a gateway route needs its device up and the gateway on-link", "[fake_kernel]") {
  fake::World world;
  const int eth1 = world.AddLink(fake::World::kRoot, Link("eth1", /*up=*/false));
  auto k = world.Kernel(fake::World::kRoot);
  REQUIRE(k->AddAddr(Address(eth1, "10.9.0.5/24")).ok());
  CHECK(ErrnoOf(k->AddRoute(Route("10.20.0.0/16", eth1, "10.9.0.1"))) == ENETDOWN);
  REQUIRE(k->SetUp(eth1, true).ok());
  CHECK(ErrnoOf(k->AddRoute(Route("10.20.0.0/16", eth1, "10.7.0.1"))) == ENETUNREACH);
  CHECK(ErrnoOf(k->AddRoute(Route("10.20.0.0/16", 999, "10.9.0.1"))) == ENODEV);
  CHECK(ErrnoOf(k->AddRoute(Route("10.20.0.1/16", eth1))) == EINVAL);  // host bits set
  // In another table the gateway may be on-link through main.
  RouteInfo in_table = Route("0.0.0.0/0", eth1, "10.9.0.1");
  in_table.table = 100;
  CHECK(k->AddRoute(in_table).ok());
}

TEST_CASE("deleting a missing route fails with ESRCH and a missing rule with ENOENT", "[fake_kernel]") {
  HostWithPod t;
  CHECK(ErrnoOf(t.host->DelRoute(Route("10.30.0.0/16", t.eth1, "10.9.0.1"))) == ESRCH);
  RouteInfo wrong_table = Route("10.20.0.0/16", t.eth1, "10.9.0.1");
  wrong_table.table = 100;
  CHECK(ErrnoOf(t.host->DelRoute(wrong_table)) == ESRCH);
  // The kernel compares protocol when it is given: a static delete misses
  // the kernel's prefix route.
  CHECK(ErrnoOf(t.host->DelRoute(Route("10.9.0.0/24", t.eth1))) == ESRCH);
  CHECK(ErrnoOf(t.host->DelRule(Rule(100, "10.9.0.5/32", 101))) == ENOENT);
  CHECK(t.world.calls().back() == "root DelRule v4 pref 100 from 10.9.0.5/32 lookup 101 = ENOENT");

  REQUIRE(t.host->DelRoute(Route("10.20.0.0/16", t.eth1, "10.9.0.1")).ok());
  CHECK(ErrnoOf(t.host->DelRoute(Route("10.20.0.0/16", t.eth1, "10.9.0.1"))) == ESRCH);
  REQUIRE(t.host->DelRule(Rule(100, "10.9.0.5/32", 100)).ok());
}

TEST_CASE("DelRoute with metric 0 removes the lowest-metric match as the kernel does", "[fake_kernel]") {
  HostWithPod t;
  RouteInfo high = Route("10.20.0.0/16", t.eth1, "10.9.0.1");
  high.metric = 50;
  RouteInfo mid = high;
  mid.metric = 10;
  REQUIRE(t.host->AddRoute(high).ok());
  REQUIRE(t.host->AddRoute(mid).ok());
  REQUIRE(t.host->DelRoute(Route("10.20.0.0/16", 0)).ok());  // the metric 0 one
  REQUIRE(t.host->DelRoute(Route("10.20.0.0/16", 0)).ok());  // then metric 10, not 50
  auto left = Get(t.host->ListRoutes(0));
  REQUIRE(left.size() == 2);
  CHECK(left[1] == high);
}

TEST_CASE("rename, mtu and name checks follow the kernel", "[fake_kernel]") {
  HostWithPod t;
  const int eth2 = t.world.AddLink(fake::World::kRoot, Link("eth2"));
  CHECK(ErrnoOf(t.host->RenameLink(t.eth1, "eth2")) == EEXIST);
  CHECK(ErrnoOf(t.host->RenameLink(t.eth1, "a-name-too-long0")) == EINVAL);
  CHECK(ErrnoOf(t.host->RenameLink(999, "x")) == ENODEV);
  CHECK(t.host->RenameLink(t.eth1, "eth1").ok());
  CHECK(ErrnoOf(t.host->SetMtu(eth2, 67)) == EINVAL);
  CHECK(ErrnoOf(t.host->SetMtu(eth2, 65536)) == EINVAL);
  CHECK(t.host->SetMtu(eth2, 9000).ok());
  CHECK(t.world.LinkByIndex(eth2)->mtu == 9000);
}

TEST_CASE("DiffSnapshots shows only the lines that changed", "[fake_kernel]") {
  HostWithPod t;
  const fake::Snapshot before = t.world.Snapshot();
  CHECK(DiffSnapshots(before, before) == "");
  REQUIRE(t.host->SetMtu(t.eth1, 9000).ok());
  const std::string id = std::to_string(t.eth1);
  CHECK(DiffSnapshots(before, t.world.Snapshot()) ==
        "- root: link " + id + " eth1 up mtu 1500 mac 02:00:00:00:00:01 kind -\n" + "+ root: link " + id +
            " eth1 up mtu 9000 mac 02:00:00:00:00:01 kind -\n");
  CHECK_FALSE(before == t.world.Snapshot());
}

}  // namespace

}  // namespace test_unit_fake_kernel_test
