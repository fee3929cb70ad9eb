// cni/state/claim.h: the shares of a macvlan/ipvlan parent (children/<parent>/).
#include "cni/state/claim.h"

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "base/file.h"

namespace test_unit_claim_test {

namespace fs = std::filesystem;

TEST_CASE("LiveShares removes a parent's share directory left empty and makes none where there is none",
          "[claim][dir]") {
  char tmpl[] = "/tmp/erdma-claim-XXXXXX";
  const std::string root = mkdtemp(tmpl);
  const std::string children = root + "/data/children";
  REQUIRE(base::MakePrivateDirs(root + "/data").ok());
  CHECK(cni::LiveShares(children, "eth1").empty());
  CHECK_FALSE(fs::exists(children));
  // Left empty by a share write that failed, or by a DEL's own share going.
  REQUIRE(base::MakePrivateDirs(children + "/eth1").ok());
  CHECK(cni::LiveShares(children, "eth1").empty());
  CHECK_FALSE(fs::exists(children + "/eth1"));
  CHECK(fs::is_directory(children));
  fs::remove_all(root);
}

namespace {

// A data dir with a network directory, removed at the end.
struct DataDir {
  std::string root, devices, network;
  DataDir() {
    char tmpl[] = "/tmp/erdma-index-XXXXXX";
    root = mkdtemp(tmpl);
    devices = root + "/data/devices";
    network = root + "/data/erdma";
    REQUIRE(base::MakePrivateDirs(devices).ok());
    REQUIRE(base::MakePrivateDirs(network).ok());
  }
  ~DataDir() { fs::remove_all(root); }
  // An owner of `device` whose state file exists when `live`.
  cni::ClaimOwner Owner(const std::string& device, const std::string& mac, const std::string& cid,
                        bool live) const {
    const std::string state = network + "/@" + cid + "@net1";
    if (live) REQUIRE(base::WriteFileAtomic(state, "{}").ok());
    return cni::ClaimOwner{"erdma", cid, "net1", state, device, mac, "0000:3b:00." + device.substr(3), {}};
  }
  // Claims the device the way ADD does (the lock, then the owner).
  void Claim(const cni::ClaimOwner& o) const {
    auto lock = cni::DeviceClaim::Lock(devices, o.device, 1000);
    REQUIRE(lock.ok());
    REQUIRE(lock->SetOwner(o).ok());
  }
  // A claim file written as an erdma-cni without the index wrote it.
  void PlantClaim(const cni::ClaimOwner& o) const {
    REQUIRE(base::WriteFileAtomic(devices + "/" + o.device, nlohmann::json{{"network", o.network},
                                                                           {"containerID", o.container_id},
                                                                           {"ifName", o.if_name},
                                                                           {"state", o.state_path},
                                                                           {"device", o.device},
                                                                           {"mac", o.mac},
                                                                           {"pci", o.pci}}
                                                                .dump())
                .ok());
  }
};

}  // namespace

TEST_CASE("the claims' index finds a claim by MAC, PCI address and state, without reading the others",
          "[claim][index]") {
  DataDir d;
  REQUIRE(cni::EnsureClaimIndex(d.devices).ok());
  CHECK(fs::exists(d.devices + "/.by:id/.built"));
  const cni::ClaimOwner a = d.Owner("eth1", "02:00:00:00:00:01", "c1", true);
  d.Claim(a);
  // Under another name (the kernel gave it back as dev7): found by its MAC or its PCI address.
  CHECK(cni::FindClaim(d.devices, "dev7", a.mac, "") == a);
  CHECK(cni::FindClaim(d.devices, "dev7", "", a.pci) == a);
  CHECK(cni::FindClaim(d.devices, "eth1", "", "") == a);
  CHECK(cni::ClaimOf(d.devices, a.state_path) == a);
  CHECK_FALSE(cni::FindClaim(d.devices, "dev7", "02:00:00:00:00:09", "0000:3b:00.9"));
  // A claim file the index does not link is not read: a lookup reads the entries of its keys, nothing else.
  const cni::ClaimOwner planted = d.Owner("eth2", "02:00:00:00:00:02", "c2", true);
  d.PlantClaim(planted);
  CHECK_FALSE(cni::FindClaim(d.devices, "dev8", planted.mac, ""));
  CHECK_FALSE(cni::ClaimOf(d.devices, planted.state_path));
  // Its node name still finds it: the claim file of a name is the lock every ADD of the name takes.
  CHECK(cni::FindClaim(d.devices, "eth2", "", "") == planted);
  // A dead owner (its state is gone) holds nothing.
  fs::remove(a.state_path);
  CHECK_FALSE(cni::FindClaim(d.devices, "dev7", a.mac, ""));
}

TEST_CASE("the claims' index of a data dir an older erdma-cni wrote is built from its live claims",
          "[claim][index]") {
  DataDir d;
  const cni::ClaimOwner live = d.Owner("eth1", "02:00:00:00:00:01", "c1", true);
  const cni::ClaimOwner dead = d.Owner("eth2", "02:00:00:00:00:02", "c2", false);
  d.PlantClaim(live);
  d.PlantClaim(dead);
  // Without the index every claim is read: the lookups are right before it is built.
  CHECK(cni::FindClaim(d.devices, "dev7", live.mac, "") == live);
  CHECK(cni::ClaimOf(d.devices, dead.state_path) == dead);
  REQUIRE(cni::EnsureClaimIndex(d.devices).ok());
  CHECK(fs::exists(d.devices + "/.by:id/.built"));
  CHECK(fs::exists(d.devices + "/.by:id/mac=" + live.mac));
  CHECK_FALSE(fs::exists(d.devices + "/.by:id/mac=" + dead.mac));
  CHECK(cni::FindClaim(d.devices, "dev7", live.mac, "") == live);
  CHECK(cni::FindClaim(d.devices, "dev7", "", live.pci) == live);
  CHECK(cni::ClaimOf(d.devices, live.state_path) == live);
  // Built once: a claim planted afterwards is not indexed by a second call.
  const cni::ClaimOwner later = d.Owner("eth3", "02:00:00:00:00:03", "c3", true);
  d.PlantClaim(later);
  REQUIRE(cni::EnsureClaimIndex(d.devices).ok());
  CHECK_FALSE(fs::exists(d.devices + "/.by:id/mac=" + later.mac));
}

TEST_CASE("Remove drops a claim's index entries, and an entry whose claim file is gone is ignored",
          "[claim][index]") {
  DataDir d;
  REQUIRE(cni::EnsureClaimIndex(d.devices).ok());
  const cni::ClaimOwner a = d.Owner("eth1", "02:00:00:00:00:01", "c1", true);
  d.Claim(a);
  // A DEL that died between the claim file's unlink and its entries' (Remove unlinks the file first).
  fs::remove(d.devices + "/eth1");
  CHECK(fs::exists(d.devices + "/.by:id/mac=" + a.mac));
  CHECK_FALSE(cni::FindClaim(d.devices, "dev7", a.mac, ""));
  CHECK_FALSE(cni::ClaimOf(d.devices, a.state_path));
  // Claimed again and removed as DEL does: no entry is left.
  d.Claim(a);
  CHECK(cni::FindClaim(d.devices, "dev7", a.mac, "") == a);
  {
    auto lock = cni::DeviceClaim::Lock(d.devices, "eth1", 1000);
    REQUIRE(lock.ok());
    lock->Remove();
  }
  CHECK_FALSE(fs::exists(d.devices + "/eth1"));
  for (const char* key : {"mac=02:00:00:00:00:01", "pci=0000:3b:00.1"})
    CHECK_FALSE(fs::exists(d.devices + "/.by:id/" + key));
  CHECK(fs::exists(d.devices + "/.by:id/.built"));
}

TEST_CASE("a MAC the index moved to another claim stays with it when the first claim goes",
          "[claim][index]") {
  DataDir d;
  REQUIRE(cni::EnsureClaimIndex(d.devices).ok());
  // The device was eth1 (its pod died without DEL), the kernel handed it back as dev7, and it is claimed
  // under that name with the same MAC.
  const cni::ClaimOwner old_owner = d.Owner("eth1", "02:00:00:00:00:01", "c1", false);
  d.Claim(old_owner);
  const cni::ClaimOwner now = d.Owner("dev7", "02:00:00:00:00:01", "c2", true);
  d.Claim(now);
  {
    auto lock = cni::DeviceClaim::Lock(d.devices, "eth1", 1000);
    REQUIRE(lock.ok());
    lock->Remove();
  }
  CHECK(cni::FindClaim(d.devices, "eth9", now.mac, "") == now);
}

}  // namespace test_unit_claim_test
