// fake::SmcWorld behaves as the kernel's SMC pnet and user EID tables do
// (fake_smc.h), so that tests written against it hold on a real kernel.
#include "test/fake/fake_smc.h"

#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "test/fake/fake_kernel.h"

namespace test_unit_fake_smc_test {

namespace {

using netlink::LinkInfo;
using netlink::PnetEntry;

PnetEntry Eth(const std::string& id, const std::string& eth) { return PnetEntry{id, eth, "", 0}; }
PnetEntry Ib(const std::string& id, const std::string& ib, uint8_t port) {
  return PnetEntry{id, "", ib, port};
}

LinkInfo Link(const char* name) {
  LinkInfo l;
  l.name = name;
  l.up = true;
  return l;
}

std::vector<PnetEntry> List(netlink::Smc& smc) {
  auto entries = smc.ListPnet();
  REQUIRE(entries.ok());
  return *entries;
}

template <typename R>
void CheckErrno(const R& r, int err) {
  REQUIRE_FALSE(r.ok());
  INFO(r.error().msg);
  CHECK(r.error().sys_errno == err);
  CHECK(r.error().code == base::Code::kKernel);
}

/// A node and one pod, each with a netdev.
struct Node {
  fake::World world;
  int pod = world.AddNetns("pod");
  int eth0_host = world.AddLink(fake::World::kRoot, Link("eth0"));
  int eth0_pod = world.AddLink(pod, Link("eth0"));
  fake::SmcWorld smc{world};
};

}  // namespace

TEST_CASE("a netdev pnet entry added in a pod is listed there and not on the node", "[smc]") {
  Node n;
  auto pod = n.smc.Smc(n.pod);
  auto root = n.smc.Smc(fake::World::kRoot);
  REQUIRE(pod->AddPnet(Eth("00163e10f8b0", "eth0")).ok());
  CHECK(List(*pod) == std::vector<PnetEntry>{Eth("00163E10F8B0", "eth0")});
  CHECK(List(*root).empty());
  CHECK(n.smc.Describe() == "pod pnet 00163E10F8B0 netdev eth0\n");
  CHECK(n.smc.calls() == std::vector<std::string>{"pod AddPnet 00163E10F8B0 netdev eth0"});
}

TEST_CASE("an IB pnet entry goes in on the node and is answered EEXIST in a pod, adding nothing", "[smc]") {
  Node n;
  auto pod = n.smc.Smc(n.pod);
  auto root = n.smc.Smc(fake::World::kRoot);
  REQUIRE(root->AddPnet(Ib("NET1", "erdma_0", 1)).ok());
  CHECK(List(*root) == std::vector<PnetEntry>{Ib("NET1", "erdma_0", 1)});
  CheckErrno(pod->AddPnet(Ib("NET1", "erdma_0", 1)), EEXIST);
  CheckErrno(pod->AddPnet(Ib("NET2", "erdma_1", 1)), EEXIST);
  CHECK(List(*pod).empty());
  CHECK(n.smc.calls().back() == "pod AddPnet NET2 ib erdma_1 port 1 = EEXIST");
}

TEST_CASE("one netdev name or one device takes one pnet entry, whatever the PNET ID or port", "[smc]") {
  Node n;
  auto root = n.smc.Smc(fake::World::kRoot);
  REQUIRE(root->AddPnet(Eth("NET1", "eth0")).ok());
  CheckErrno(root->AddPnet(Eth("NET1", "eth0")), EEXIST);
  CheckErrno(root->AddPnet(Eth("NET2", "eth0")), EEXIST);
  REQUIRE(root->AddPnet(Ib("NET1", "erdma_0", 1)).ok());
  CheckErrno(root->AddPnet(Ib("NET1", "erdma_0", 2)), EEXIST);
  CheckErrno(root->AddPnet(Ib("NET3", "erdma_0", 1)), EEXIST);
  // A netdev entry and a device entry of the same name do not clash.
  REQUIRE(root->AddPnet(Eth("NET1", "erdma_0")).ok());
  CHECK(List(*root) ==
        std::vector<PnetEntry>{Eth("NET1", "eth0"), Ib("NET1", "erdma_0", 1), Eth("NET1", "erdma_0")});
}

TEST_CASE("deleting a PNET ID removes all its entries in that namespace only, ENOENT when none", "[smc]") {
  Node n;
  auto pod = n.smc.Smc(n.pod);
  auto root = n.smc.Smc(fake::World::kRoot);
  REQUIRE(root->AddPnet(Eth("NET1", "eth0")).ok());
  REQUIRE(root->AddPnet(Ib("NET1", "erdma_0", 1)).ok());
  REQUIRE(root->AddPnet(Eth("NET2", "eth1")).ok());
  REQUIRE(pod->AddPnet(Eth("NET1", "eth0")).ok());
  REQUIRE(root->DelPnet("net1").ok());  // normalized like the add
  CHECK(List(*root) == std::vector<PnetEntry>{Eth("NET2", "eth1")});
  CHECK(List(*pod) == std::vector<PnetEntry>{Eth("NET1", "eth0")});
  CheckErrno(root->DelPnet("NET1"), ENOENT);
  CHECK(n.smc.calls().back() == "root DelPnet NET1 = ENOENT");
}

TEST_CASE("pnet entries outlive their netdev and die with their namespace", "[smc]") {
  Node n;
  auto pod = n.smc.Smc(n.pod);
  REQUIRE(pod->AddPnet(Eth("NET1", "eth0")).ok());
  REQUIRE(pod->AddPnet(Eth("NET1", "eth9")).ok());  // no such netdev: the kernel takes it all the same
  n.world.DestroyLink(n.eth0_pod);
  CHECK(List(*pod).size() == 2);
  n.world.DeleteNetns(n.pod);
  CHECK(List(*pod).empty());
  CHECK(n.smc.PnetTable(n.pod).empty());
  CheckErrno(pod->AddPnet(Eth("NET1", "eth0")), ENODEV);
  CheckErrno(pod->DelPnet("NET1"), ENOENT);
  CHECK(n.smc.Describe().empty());
}

TEST_CASE("user EIDs are one table for every namespace, at most 4, full before duplicate", "[smc]") {
  Node n;
  auto pod = n.smc.Smc(n.pod);
  auto root = n.smc.Smc(fake::World::kRoot);
  REQUIRE(pod->HasUeid());
  REQUIRE(pod->AddUeid("erdma-smc").ok());
  auto seen = root->ListUeids();
  REQUIRE(seen.ok());
  CHECK(*seen == std::vector<std::string>{"ERDMA-SMC"});
  CheckErrno(root->AddUeid("ERDMA-SMC"), EEXIST);
  REQUIRE(root->AddUeid("B").ok());
  REQUIRE(root->AddUeid("C").ok());
  REQUIRE(root->AddUeid("D").ok());
  CheckErrno(root->AddUeid("E"), ERANGE);
  CheckErrno(root->AddUeid("ERDMA-SMC"), ERANGE);  // smc_clc_ueid_add counts first
  REQUIRE(root->DelUeid("erdma-smc ").ok());
  CheckErrno(pod->DelUeid("ERDMA-SMC"), ENOENT);
  CHECK(n.smc.Ueids() == std::vector<std::string>{"B", "C", "D"});
  CHECK(n.smc.Describe() == "ueid B\nueid C\nueid D\n");
}

TEST_CASE("without SMC opening fails as on a kernel without it, naming the family and the module", "[smc]") {
  Node n;
  n.smc.SetSmcPresent(false);
  auto smc = n.smc.Open(n.pod);
  REQUIRE_FALSE(smc.ok());
  CHECK(smc.error().code == base::Code::kKernel);
  CHECK(smc.error().sys_errno == ENOENT);
  CHECK(smc.error().msg.find(netlink::kNoSmcMessage) != std::string::npos);
  CHECK(smc.error().msg.find("SMC_PNETID") != std::string::npos);
  CHECK_THROWS_AS(n.smc.Smc(n.pod), std::logic_error);
  n.smc.SetSmcPresent(true);
  CHECK(n.smc.Open(n.pod).ok());
}

TEST_CASE("without user EID support the pnet verbs work and the user EID verbs fail EOPNOTSUPP", "[smc]") {
  Node n;
  n.smc.SetUeidPresent(false);
  auto old = n.smc.Smc(n.pod);
  CHECK_FALSE(old->HasUeid());
  CHECK(old->AddPnet(Eth("NET1", "eth0")).ok());
  CheckErrno(old->ListUeids(), EOPNOTSUPP);
  CheckErrno(old->AddUeid("ERDMA"), EOPNOTSUPP);
  CheckErrno(old->DelUeid("ERDMA"), EOPNOTSUPP);
  CHECK(old->AddUeid("ERDMA").error().msg.find(netlink::kNoUeidMessage) != std::string::npos);
  CHECK(n.smc.mutating_calls() == 1);  // refused before reaching the kernel
  n.smc.SetUeidPresent(true);
  CHECK_FALSE(old->HasUeid());  // fixed at open, as the real handle's
  CHECK(n.smc.Smc(n.pod)->HasUeid());
}

TEST_CASE("SMC input the real socket refuses before sending is refused uncounted and unlogged", "[smc]") {
  Node n;
  auto pod = n.smc.Smc(n.pod);
  auto bad = pod->AddPnet(Eth("NET-1", "eth0"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code == base::Code::kInvalidConfig);
  CHECK(bad.error().sys_errno == EINVAL);
  CHECK(pod->AddPnet(PnetEntry{"NET1", "eth0", "erdma_0", 1}).error().code == base::Code::kInvalidConfig);
  CHECK(pod->DelPnet("").error().code == base::Code::kInvalidConfig);
  CHECK(pod->AddUeid("-X").error().code == base::Code::kInvalidConfig);
  CHECK(pod->DelUeid(std::string(33, 'X')).error().code == base::Code::kInvalidConfig);
  CHECK(n.smc.mutating_calls() == 0);
  CHECK(n.smc.calls().empty());
}

TEST_CASE("failing each SMC call in turn changes nothing at that call and fails exactly it", "[smc]") {
  for (int fail_at = 1; fail_at <= 4; ++fail_at) {
    Node n;
    auto pod = n.smc.Smc(n.pod);
    auto root = n.smc.Smc(fake::World::kRoot);
    n.smc.FailCall(fail_at, EPERM);
    std::vector<base::Status> results;
    std::vector<std::string> before;
    auto step = [&](auto call) {
      before.push_back(n.smc.Describe());
      results.push_back(call());
    };
    step([&] { return pod->AddPnet(Eth("NET1", "eth0")); });
    step([&] { return root->AddUeid("ERDMA"); });
    step([&] { return pod->DelPnet("NET1"); });
    step([&] { return root->DelUeid("ERDMA"); });
    INFO("fail_at " << fail_at);
    CHECK(n.smc.failure_fired());
    for (int i = 0; i < 4; ++i) {
      INFO("call " << i + 1);
      if (i + 1 == fail_at) {
        REQUIRE_FALSE(results[i].ok());
        CHECK(results[i].error().sys_errno == EPERM);
        CHECK(results[i].error().details == "fake: injected");
        // The failed call left the tables as they were.
        const std::string after = i + 1 < 4 ? before[i + 1] : n.smc.Describe();
        CHECK(after == before[i]);
        CHECK(n.smc.calls()[i].find("= EPERM (injected)") != std::string::npos);
      } else {
        // Undoing what the failure kept from being done gets the kernel's not-found.
        const bool undo_of_failed = (fail_at == 1 && i == 2) || (fail_at == 2 && i == 3);
        CHECK(results[i].ok() == !undo_of_failed);
      }
    }
    const char* left[] = {"", "", "pod pnet NET1 netdev eth0\n", "ueid ERDMA\n"};
    CHECK(n.smc.Describe() == left[fail_at - 1]);
    CHECK(n.smc.mutating_calls() == 4);
  }
}

TEST_CASE("SMC FailCall counts from when it is set and ClearCalls keeps it pending", "[smc]") {
  Node n;
  auto root = n.smc.Smc(fake::World::kRoot);
  REQUIRE(root->AddUeid("A").ok());
  n.smc.FailCall(2);
  n.smc.ClearCalls();
  REQUIRE(root->AddUeid("B").ok());
  CheckErrno(root->AddUeid("C"), EIO);
  CHECK(n.smc.calls() == std::vector<std::string>{"root AddUeid B", "root AddUeid C = EIO (injected)"});
  REQUIRE(root->AddUeid("C").ok());
  CHECK(n.smc.Ueids() == std::vector<std::string>{"A", "B", "C"});
}

TEST_CASE("SMC setup entries are there before any call and bad setups throw", "[smc]") {
  Node n;
  n.smc.AddPnetEntry(fake::World::kRoot, Ib("net1", "mlx5_0", 1));
  n.smc.AddUeidEntry("pre");
  CHECK(n.smc.Describe() == "root pnet NET1 ib mlx5_0 port 1\nueid PRE\n");
  CHECK_THROWS_AS(n.smc.AddPnetEntry(n.pod, Ib("NET1", "mlx5_0", 1)), std::invalid_argument);
  CHECK_THROWS_AS(n.smc.AddPnetEntry(n.pod, Eth("NET 1", "eth0")), std::invalid_argument);
  CHECK(n.smc.mutating_calls() == 0);
}

}  // namespace test_unit_fake_smc_test
