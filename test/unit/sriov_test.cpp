// SR-IOV discovery on a sysfs tree laid out as the kernel does it.
#include "cni/driver/sriov.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "cni/device/lookup.h"
#include "test/unit/fake_sysfs.h"

namespace test_unit_sriov_test {

namespace {

struct Tree {
  std::string dir;
  sysfstest::FakeSysfs sys;
  Tree() : dir(MakeTemp()), sys(dir) {
    // A ConnectX-style PF with three VFs: a netdev, one on vfio-pci, one unbound.
    sys.AddDevice("0000:3b:00.0", "mlx5_core");
    sys.AddNetdev("0000:3b:00.0", "ens1f0", "p0");
    sys.AddVf("0000:3b:00.0", 0, "0000:3b:00.2", "mlx5_core");
    sys.AddNetdev("0000:3b:00.2", "ens1f0v0");
    sys.AddVf("0000:3b:00.0", 1, "0000:3b:00.3", "vfio-pci");
    sys.AddVf("0000:3b:00.0", 10, "0000:3b:01.4", "");
    // A plain NIC without SR-IOV.
    sys.AddDevice("0000:5e:00.0", "ixgbe");
    sys.AddNetdev("0000:5e:00.0", "eth1");
  }
  ~Tree() { std::filesystem::remove_all(dir); }
  static std::string MakeTemp() {
    char tmpl[] = "/tmp/erdma-sysfs-XXXXXX";
    return mkdtemp(tmpl);
  }
};

const std::string kKey = "device.pci \"x\"";

}  // namespace

TEST_CASE("a VF with a netdev resolves to its PF, its number, both netdevs and its driver", "[sriov]") {
  Tree t;
  auto vf = cni::FindVf(t.dir, "0000:3b:00.2", kKey);
  REQUIRE(vf.ok());
  CHECK(vf->pci == "0000:3b:00.2");
  CHECK(vf->pf_pci == "0000:3b:00.0");
  CHECK(vf->vf == 0);
  CHECK(vf->pf_netdev == "ens1f0");
  CHECK(vf->netdev == "ens1f0v0");
  CHECK(vf->driver == "mlx5_core");
  CHECK_FALSE(vf->userspace());
}

TEST_CASE("a VF on vfio-pci has no netdev and belongs to user space, VF numbers past 9 are found",
          "[sriov]") {
  Tree t;
  auto vfio = cni::FindVf(t.dir, "0000:3b:00.3", kKey);
  REQUIRE(vfio.ok());
  CHECK(vfio->vf == 1);
  CHECK(vfio->netdev.empty());
  CHECK(vfio->driver == "vfio-pci");
  CHECK(vfio->userspace());

  auto unbound = cni::FindVf(t.dir, "0000:3b:01.4", kKey);
  REQUIRE(unbound.ok());
  CHECK(unbound->vf == 10);
  CHECK(unbound->driver.empty());
  CHECK_FALSE(unbound->userspace());

  for (const char* d : {"mlx5_vfio_pci", "uio_pci_generic", "igb_uio"}) {
    cni::SriovVf v;
    v.driver = d;
    CHECK(v.userspace());
  }
}

TEST_CASE("in switchdev mode the PF's uplink is chosen over the VF representors", "[sriov]") {
  Tree t;
  // Representors sort before the uplink and share its PCI device.
  t.sys.AddNetdev("0000:3b:00.0", "aa_rep0", "pf0vf0");
  t.sys.AddNetdev("0000:3b:00.0", "ab_rep1", "c1pf0vf1");
  auto vf = cni::FindVf(t.dir, "0000:3b:00.2", kKey);
  REQUIRE(vf.ok());
  CHECK(vf->pf_netdev == "ens1f0");
}

TEST_CASE("a PCI address that is not a VF is code 7 naming the key and mode move", "[sriov]") {
  Tree t;
  for (const char* pci : {"0000:5e:00.0", "0000:3b:00.0"}) {
    auto r = cni::FindVf(t.dir, pci, "device.pci \"" + std::string(pci) + "\"");
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == base::Code::kInvalidConfig);
    CHECK(r.error().msg.rfind("device.pci \"", 0) == 0);
    CHECK(r.error().msg.find("not an SR-IOV VF") != std::string::npos);
    CHECK(r.error().msg.find("mode \"move\"") != std::string::npos);
  }
}

TEST_CASE("a PCI address with no device is device-not-found", "[sriov]") {
  Tree t;
  auto r = cni::FindVf(t.dir, "0000:99:00.1", kKey);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kDeviceNotFound);
  CHECK(r.error().msg.find("0000:99:00.1") != std::string::npos);
}

TEST_CASE("a VF its PF does not list (SR-IOV being reset) is device-not-found", "[sriov]") {
  Tree t;
  std::filesystem::remove(t.dir + "/devices/pci0000:3a/0000:3b:00.0/virtfn0");
  auto r = cni::FindVf(t.dir, "0000:3b:00.2", kKey);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kDeviceNotFound);
  CHECK(r.error().msg.find("virtfn") != std::string::npos);
}

TEST_CASE("a VF netdev's PCI address comes from class/net as the kernel links it", "[sriov]") {
  Tree t;
  CHECK(cni::PciAddressOf(t.dir, "ens1f0v0") == "0000:3b:00.2");
  CHECK(cni::PciAddressOf(t.dir, "eth1") == "0000:5e:00.0");
  CHECK(cni::PciAddressOf(t.dir, "nothere").empty());
}

TEST_CASE("a virtio NIC's PCI address is the PCI function above its virtio device", "[sriov]") {
  Tree t;
  t.sys.AddVirtioNetdev("0000:3a:05.0", 3, "eth5");
  CHECK(cni::PciAddressOf(t.dir, "eth5") == "0000:3a:05.0");
}

}  // namespace test_unit_sriov_test
