// netlink::OpenSmc against the real kernel. Where the kernel has no SMC (as
// on the development machines) only the "missing feature" error can be
// checked; the rest runs where SMC exists (the VM harness) and says SKIPPED,
// naming the feature, where it cannot run. iproute2's `genl` tells whether
// the family exists, and smc-tools' `smc_pnet` (where installed) is the
// independent witness of the pnet table.
#include "netlink/smc_socket.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "netlink/netns.h"
#include "netlink/smc_codec.h"
#include "netlink/smc_kernel.h"
#include "netlink/transport.h"
#include "test/kernel/require_ok.h"
#include "test/kernel/scratch_netns.h"
#include "test/kernel/skip.h"

namespace test_kernel_smc_socket_test {

namespace {

using netlink::PnetEntry;
using netlink::Smc;
using rt_test::ScratchNetns;

/// Whether nlctrl knows the family, asked without the code under test.
bool KernelHasFamily(const std::string& name) { return rt_test::Run("genl ctrl get name " + name).exit == 0; }

std::unique_ptr<Smc> OpenIn(const std::string& path) {
  auto ns = netlink::Netns::Open(path, "test netns");
  REQUIRE_OK(ns);
  auto smc = netlink::OpenSmc(*ns);
  REQUIRE_OK(smc);
  return std::move(smc).value();
}

std::vector<PnetEntry> List(Smc& smc) {
  auto entries = smc.ListPnet();
  REQUIRE_OK(entries);
  return *entries;
}

/// A PNET ID of this run: letters and digits only, at most 16.
std::string TestPnetId() { return "ECNI" + std::to_string(::getpid() % 100000000); }

/// The family id `genl ctrl get` prints ("ID: 0x10"), or -1.
int GenlFamilyId(const std::string& name) {
  const rt_test::Cmd r = rt_test::Run("genl ctrl get name " + name);
  const size_t at = r.out.find("ID: 0x");
  if (r.exit != 0 || at == std::string::npos) return -1;
  unsigned id = 0;
  return std::sscanf(r.out.c_str() + at, "ID: 0x%x", &id) == 1 ? int(id) : -1;
}

}  // namespace

TEST_CASE("the socket resolves generic netlink families as genl does, and a missing one is ENOENT", "[smc]") {
  // Every kernel has nlctrl, so the path that resolves the SMC families is
  // checked against a real kernel here too.
  auto here = netlink::Netns::Current();
  REQUIRE_OK(here);
  auto sock = netlink::Socket::Open(*here, NETLINK_GENERIC, "test socket");
  REQUIRE_OK(sock);
  auto ctrl = sock->ResolveFamily("nlctrl");
  REQUIRE_OK(ctrl);
  CHECK(*ctrl == GENL_ID_CTRL);
  const int netdev_id = GenlFamilyId("netdev");
  if (netdev_id < 0) {
    WARN("SKIPPED the netdev family cross-check: genl does not know it on this kernel");
  } else {
    auto netdev = sock->ResolveFamily("netdev");
    REQUIRE_OK(netdev);
    CHECK(*netdev == netdev_id);
  }
  auto missing = sock->ResolveFamily("ECNI_NO_SUCH");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().sys_errno == ENOENT);
  CHECK(missing.error().msg.find("CTRL_CMD_GETFAMILY ECNI_NO_SUCH") != std::string::npos);
  // The socket still works after the refusal (no answer left queued).
  auto again = sock->ResolveFamily("nlctrl");
  REQUIRE_OK(again);
  CHECK(*again == GENL_ID_CTRL);
}

TEST_CASE("opening SMC netlink on a kernel without SMC names the SMC_PNETID family and the smc module",
          "[smc]") {
  if (KernelHasFamily("SMC_PNETID")) {
    KT_SKIP("this kernel has SMC (generic netlink family SMC_PNETID), so its absence cannot be tested");
  }
  auto here = netlink::Netns::Current();
  REQUIRE_OK(here);
  auto smc = netlink::OpenSmc(*here);
  REQUIRE_FALSE(smc.ok());
  CHECK(smc.error().code == base::Code::kKernel);
  CHECK(smc.error().sys_errno == ENOENT);
  CHECK(smc.error().msg.find(netlink::kNoSmcMessage) != std::string::npos);
  CHECK(smc.error().msg.find(here->path()) != std::string::npos);

  // The same from inside a private namespace (the family lookup is global).
  ScratchNetns ns;
  auto pod = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE_OK(pod);
  auto in_pod = netlink::OpenSmc(*pod);
  REQUIRE_FALSE(in_pod.ok());
  CHECK(in_pod.error().sys_errno == ENOENT);
  CHECK(in_pod.error().msg.find(ns.path()) != std::string::npos);
}

TEST_CASE("an SMC pnet entry for a veth in a scratch namespace is listed there only and deleted by its ID",
          "[smc]") {
  if (!KernelHasFamily("SMC_PNETID")) {
    KT_SKIP("kernel has no SMC (generic netlink family SMC_PNETID; CONFIG_SMC, smc module)");
  }
  ScratchNetns ns;
  ns.Ip("link add ecni-smc-a type veth peer name ecni-smc-b");
  auto pod = OpenIn(ns.path());
  auto host = OpenIn("/proc/self/ns/net");
  const std::string id = TestPnetId();
  const std::vector<PnetEntry> host_before = List(*host);

  REQUIRE(List(*pod).empty());  // a new namespace starts with an empty table
  REQUIRE_OK(pod->AddPnet(PnetEntry{id, "ecni-smc-a", "", 0}));
  CHECK(List(*pod) == std::vector<PnetEntry>{{id, "ecni-smc-a", "", 0}});
  CHECK(List(*host) == host_before);  // per-namespace tables

  const rt_test::Cmd witness = rt_test::Run("ip netns exec " + ns.name() + " smc_pnet");
  if (witness.exit == 127 || witness.out.find("not found") != std::string::npos) {
    WARN("SKIPPED the smc_pnet cross-check: smc-tools is not installed");
  } else {
    INFO(witness.out);
    CHECK(witness.out.find(id + " ecni-smc-a n/a 255") != std::string::npos);
  }

  // One entry per netdev name, whatever the PNET ID.
  auto again = pod->AddPnet(PnetEntry{"OTHER" + id.substr(4), "ecni-smc-a", "", 0});
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().sys_errno == EEXIST);
  // IB entries are for the initial namespace only: elsewhere the kernel
  // ignores them and says EEXIST.
  auto ib = pod->AddPnet(PnetEntry{id, "", "ecni_nodev", 1});
  REQUIRE_FALSE(ib.ok());
  CHECK(ib.error().sys_errno == EEXIST);
  CHECK(List(*pod).size() == 1);

  REQUIRE_OK(pod->DelPnet(id));
  CHECK(List(*pod).empty());
  auto gone = pod->DelPnet(id);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().sys_errno == ENOENT);
}

TEST_CASE("an SMC pnet entry outlives its netdev and the kernel takes one for a netdev that does not exist",
          "[smc]") {
  if (!KernelHasFamily("SMC_PNETID")) {
    KT_SKIP("kernel has no SMC (generic netlink family SMC_PNETID; CONFIG_SMC, smc module)");
  }
  ScratchNetns ns;
  ns.Ip("link add ecni-smc-a type veth peer name ecni-smc-b");
  auto pod = OpenIn(ns.path());
  const std::string id = TestPnetId();
  REQUIRE_OK(pod->AddPnet(PnetEntry{id, "ecni-smc-a", "", 0}));
  REQUIRE_OK(pod->AddPnet(PnetEntry{id, "ecni-nodev", "", 0}));
  ns.Ip("link del ecni-smc-a");
  CHECK(List(*pod).size() == 2);
  REQUIRE_OK(pod->DelPnet(id));
}

TEST_CASE("an SMC user EID added from a scratch namespace is in the one global table until removed",
          "[smc]") {
  if (!KernelHasFamily("SMC_GEN_NETLINK")) {
    KT_SKIP("kernel has no SMC_GEN_NETLINK generic netlink family (no SMC, or SMC older than 5.11)");
  }
  ScratchNetns ns;
  auto pod = OpenIn(ns.path());
  auto host = OpenIn("/proc/self/ns/net");
  if (!pod->HasUeid()) {
    KT_SKIP("SMC_GEN_NETLINK has no user EID commands on this kernel");
  }
  auto before = host->ListUeids();
  REQUIRE_OK(before);
  // The table is the whole machine's: leave one in use alone.
  if (!before->empty()) {
    KT_SKIP("the machine's SMC user EID table is in use (" << before->size() << " entries)");
  }
  const std::string ueid = "ECNI-TEST." + std::to_string(::getpid());
  REQUIRE_OK(pod->AddUeid(ueid));
  auto seen = host->ListUeids();
  auto removed = pod->DelUeid(ueid);  // before any REQUIRE can leave it behind
  REQUIRE_OK(seen);
  CHECK(*seen == std::vector<std::string>{ueid});
  REQUIRE_OK(removed);
  auto after = host->ListUeids();
  REQUIRE_OK(after);
  CHECK(after->empty());
  auto gone = pod->DelUeid(ueid);
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().sys_errno == ENOENT);
}

}  // namespace test_kernel_smc_socket_test
