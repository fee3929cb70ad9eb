// cni/device/pci_distance.h: NCCL's levels between sysfs paths of real
// topologies, a sysfs tree read, and NICs ranked for a pod's GPUs.
#include "cni/device/pci_distance.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace test_unit_device_pci_distance_test {

namespace fs = std::filesystem;
using cni::PciLevel;
using cni::PciLocation;
using cni::RankBasis;

namespace {

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/erdma-pci-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~Dir() { fs::remove_all(path); }
};

PciLocation Loc(const std::string& realpath, int numa) {
  auto l = cni::ParsePciPath(realpath);
  REQUIRE(l);
  l->numa = numa;
  return *l;
}

// A DGX-like node: two CPUs, each with two PCIe switches (root port, upstream
// port, downstream ports) holding two GPUs and one NIC.
struct Dgx {
  std::vector<PciLocation> gpus, nics;
  Dgx() {
    const std::vector<std::pair<std::string, int>> roots = {{"15", 0}, {"3a", 0}, {"9a", 1}, {"ba", 1}};
    for (const auto& [bus, numa] : roots) {
      const int b = std::stoi(bus, nullptr, 16);
      auto hex = [](int v) {
        char s[3];
        std::snprintf(s, sizeof s, "%02x", v);
        return std::string(s);
      };
      const std::string usp = "/sys/devices/pci0000:" + bus + "/0000:" + bus + ":01.0/0000:" + hex(b + 1) +
                              ":00.0/0000:" + hex(b + 2);
      gpus.push_back(Loc(usp + ":00.0/0000:" + hex(b + 3) + ":00.0", numa));
      gpus.push_back(Loc(usp + ":01.0/0000:" + hex(b + 4) + ":00.0", numa));
      nics.push_back(Loc(usp + ":02.0/0000:" + hex(b + 5) + ":00.0", numa));
    }
  }
};

std::vector<std::string> Names(const cni::RailRanking& r) {
  std::vector<std::string> out;
  for (const auto& n : r.nics) out.push_back(n.name);
  return out;
}

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << text;
}

void Link(const std::string& target, const std::string& at) {
  fs::create_directories(fs::path(at).parent_path());
  fs::create_directory_symlink(target, at);
}

}  // namespace

TEST_CASE("level names are NCCL's, the better first") {
  CHECK(cni::PciLevelName(PciLevel::kPix) == "PIX");
  CHECK(cni::PciLevelName(PciLevel::kPxb) == "PXB");
  CHECK(cni::PciLevelName(PciLevel::kPhb) == "PHB");
  CHECK(cni::PciLevelName(PciLevel::kSys) == "SYS");
  CHECK(PciLevel::kPix < PciLevel::kPxb);
  CHECK(PciLevel::kPhb < PciLevel::kSys);
}

TEST_CASE("a sysfs realpath gives its root and the BDFs down to the device") {
  auto l = cni::ParsePciPath("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0");
  REQUIRE(l);
  CHECK(l->root == "pci0000:00");
  CHECK(l->path == std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:03:00.0"});
  CHECK(l->numa == -1);

  auto virtio = cni::ParsePciPath("/sys/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0");
  REQUIRE(virtio);
  CHECK(virtio->path == std::vector<std::string>{"0000:00:03.0"});

  auto tree = cni::ParsePciPath("/tmp/pci0000:00/0000:00:01.0/sys/devices/pci0000:3a/0000:3a:00.0/");
  REQUIRE(tree);
  CHECK(tree->root == "pci0000:3a");
  CHECK(tree->path == std::vector<std::string>{"0000:3a:00.0"});

  auto hyperv = cni::ParsePciPath(
      "/sys/devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/7870dd84-aa1b-4a5e-9c1f-000000000000/"
      "pci7870:00/7870:00:00.0");
  REQUIRE(hyperv);
  CHECK(hyperv->root == "pci7870:00");

  auto vmd = cni::ParsePciPath("/sys/devices/pci10000:00/10000:00:02.0/10000:01:00.0");
  REQUIRE(vmd);
  CHECK(vmd->path.size() == 2);

  for (const std::string none : {"", "/sys/devices/virtual/net/veth0", "/sys/devices/platform/serial8250",
                                 "/sys/devices/pci0000:00", "/sys/devices/pci0000:00/0000:00:1.0",
                                 "/sys/devices/pci000:00/0000:00:01.0", "/sys/devices/0000:00:01.0"})
    CHECK_FALSE(cni::ParsePciPath(none));
}

TEST_CASE("on a DGX-like node a GPU and the NIC of its switch are PIX, other switches PHB or SYS") {
  const Dgx dgx;
  CHECK(cni::Level(dgx.gpus[0], dgx.nics[0]) == PciLevel::kPix);  // .../USP/DSP1/GPU, .../USP/DSP3/NIC
  CHECK(cni::Level(dgx.gpus[1], dgx.nics[0]) == PciLevel::kPix);
  CHECK(cni::Level(dgx.gpus[0], dgx.gpus[1]) == PciLevel::kPix);
  CHECK(cni::Level(dgx.gpus[0], dgx.nics[1]) == PciLevel::kPhb);  // another root complex, same CPU
  CHECK(cni::Level(dgx.gpus[0], dgx.nics[2]) == PciLevel::kSys);  // the other CPU
  CHECK(cni::Level(dgx.gpus[7], dgx.nics[3]) == PciLevel::kPix);
  CHECK(cni::Level(dgx.gpus[7], dgx.nics[2]) == PciLevel::kPhb);
  CHECK(cni::Level(dgx.gpus[7], dgx.nics[0]) == PciLevel::kSys);
  CHECK(cni::Level(dgx.nics[0], dgx.gpus[0]) == cni::Level(dgx.gpus[0], dgx.nics[0]));
}

TEST_CASE("nested switches are PIX below the inner switch and PXB across it") {
  const std::string outer = "/sys/devices/pci0000:c0/0000:c0:01.1/0000:c1:00.0";
  const std::string inner = outer + "/0000:c2:00.0/0000:c3:00.0";
  const auto gpu = Loc(inner + "/0000:c4:00.0/0000:c5:00.0", 1);
  const auto near = Loc(inner + "/0000:c4:10.0/0000:c6:00.0", 1);
  const auto far = Loc(outer + "/0000:c2:04.0/0000:c7:00.0", 1);
  CHECK(cni::Level(gpu, near) == PciLevel::kPix);
  CHECK(cni::Level(gpu, far) == PciLevel::kPxb);
  CHECK(cni::Level(far, gpu) == PciLevel::kPxb);
  // A device and the bridges above it, and a device and itself.
  CHECK(cni::Level(gpu, Loc(inner + "/0000:c4:00.0", 1)) == PciLevel::kPix);
  CHECK(cni::Level(gpu, Loc(inner, 1)) == PciLevel::kPix);
  CHECK(cni::Level(gpu, Loc(outer, 1)) == PciLevel::kPxb);
  CHECK(cni::Level(gpu, gpu) == PciLevel::kPix);
}

TEST_CASE("a GPU behind a bridge on its own card is PXB to a NIC in another slot of its switch") {
  const std::string usp = "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0";
  const auto gpu = Loc(usp + "/0000:42:00.0/0000:43:00.0/0000:44:00.0", 0);
  CHECK(cni::Level(gpu, Loc(usp + "/0000:42:01.0/0000:45:00.0", 0)) == PciLevel::kPxb);
  CHECK(cni::Level(gpu, Loc(usp + "/0000:42:00.0/0000:43:00.0/0000:44:00.1", 0)) == PciLevel::kPix);
}

TEST_CASE("two functions of one device, or two devices on one bridge, are PIX") {
  const std::string port = "/sys/devices/pci0000:3a/0000:3a:02.0";
  CHECK(cni::Level(Loc(port + "/0000:3b:00.0", 0), Loc(port + "/0000:3b:00.1", 0)) == PciLevel::kPix);
  CHECK(cni::Level(Loc(port + "/0000:3b:01.0", 0), Loc(port + "/0000:3b:02.0", 0)) == PciLevel::kPix);
}

TEST_CASE("root ports or root complexes of one NUMA node are PHB, of two NUMA nodes SYS") {
  const auto a = Loc("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0);
  const auto b = Loc("/sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0", 0);
  const auto c = Loc("/sys/devices/pci0000:17/0000:17:02.0/0000:18:00.0", 0);
  const auto d = Loc("/sys/devices/pci0000:85/0000:85:02.0/0000:86:00.0", 1);
  CHECK(cni::Level(a, b) == PciLevel::kPhb);
  CHECK(cni::Level(a, c) == PciLevel::kPhb);
  CHECK(cni::Level(a, d) == PciLevel::kSys);
  // NUMA unknown on both is one (NCCL's) CPU node; on one side only, another.
  CHECK(cni::Level(Loc("/sys/devices/pci0000:00/0000:00:01.0", -1),
                   Loc("/sys/devices/pci0000:80/0000:80:01.0", -1)) == PciLevel::kPhb);
  CHECK(cni::Level(Loc("/sys/devices/pci0000:00/0000:00:01.0", -1), c) == PciLevel::kSys);
}

TEST_CASE("the H200 VM is flat: GPU and NIC on the root bus, PHB, ranked by name") {
  std::ifstream in(std::string(ERDMA_TEST_FIXTURES_DIR) + "/nvidia-h200-vm/sys-bus-pci-devices.txt");
  std::optional<PciLocation> gpu, nic;
  std::vector<PciLocation> all;
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string bdf, path, cls;
    fields >> bdf >> path >> cls;
    all.push_back(Loc(path, -1));
    CHECK(all.back().path.back() == bdf);
    if (cls == "0x030200") gpu = all.back();
    if (cls == "0x020000") nic = all.back();
  }
  REQUIRE(all.size() == 7);
  REQUIRE(gpu);
  REQUIRE(nic);
  CHECK(gpu->path.back() == "0000:00:06.0");
  CHECK(nic->path.back() == "0000:00:03.0");
  CHECK(cni::Level(*gpu, *nic) == PciLevel::kPhb);
  CHECK(cni::IsFlatTopology(all));

  auto r = cni::RankRails({{"0000:00:06.0", gpu}}, {{"eth1", all[4]}, {"eth0", nic}});
  CHECK(r.basis == RankBasis::kFlat);
  CHECK(Names(r) == std::vector<std::string>{"eth0", "eth1"});
  CHECK(r.nics[0].gpu.empty());
  CHECK_FALSE(r.nics[0].level);
  CHECK(r.nics[0].round == 0);
  // An unmapped GPU whose NUMA node the kubelet does not know changes nothing.
  CHECK(cni::RankRails({{"MIG-x", std::nullopt, -1}}, {{"eth1", all[4]}, {"eth0", nic}}).basis ==
        RankBasis::kFlat);
}

TEST_CASE("a topology is flat only on one root, with no bridge and no NUMA node") {
  const auto a = Loc("/sys/devices/pci0000:00/0000:00:05.0", -1);
  const auto b = Loc("/sys/devices/pci0000:00/0000:00:06.0", -1);
  CHECK(cni::IsFlatTopology({a, b}));
  CHECK_FALSE(cni::IsFlatTopology({}));
  CHECK_FALSE(cni::IsFlatTopology({a, Loc("/sys/devices/pci0000:00/0000:00:06.0", 0)}));
  CHECK_FALSE(cni::IsFlatTopology({a, Loc("/sys/devices/pci0000:01/0000:01:06.0", -1)}));
  CHECK_FALSE(cni::IsFlatTopology({a, Loc("/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0", -1)}));
  CHECK(cni::RankRails({{"MIG-x", std::nullopt, 0}}, {{"eth0", a}}).basis == RankBasis::kTopology);
}

TEST_CASE("each GPU gets the NIC of its own switch first, and a NIC on another root port last") {
  const std::string s0 = "/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0";
  const std::string s1 = "/sys/devices/pci0000:9a/0000:9a:01.0/0000:9b:00.0";
  const std::vector<cni::RailGpu> gpus = {{"0000:18:00.0", Loc(s0 + "/0000:17:00.0/0000:18:00.0", 0)},
                                          {"0000:9d:00.0", Loc(s1 + "/0000:9c:00.0/0000:9d:00.0", 1)}};
  const std::vector<cni::RailNic> nics = {
      {"eth0", Loc("/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0", 0)},
      {"eth2", Loc(s1 + "/0000:9c:02.0/0000:9e:00.0", 1)},
      {"eth1", Loc(s0 + "/0000:17:02.0/0000:19:00.0", 0)},
  };
  auto r = cni::RankRails(gpus, nics);
  CHECK(r.basis == RankBasis::kTopology);
  REQUIRE(Names(r) == std::vector<std::string>{"eth1", "eth2", "eth0"});
  CHECK(r.nics[0].gpu == "0000:18:00.0");
  CHECK(r.nics[0].level == PciLevel::kPix);
  CHECK(r.nics[0].round == 1);
  CHECK(r.nics[1].gpu == "0000:9d:00.0");
  CHECK(r.nics[1].level == PciLevel::kPix);
  CHECK(r.nics[2].gpu == "0000:18:00.0");
  CHECK(r.nics[2].level == PciLevel::kPhb);
  CHECK(r.nics[2].round == 2);
  CHECK_FALSE(r.nics[2].numa_only);
}

TEST_CASE("eight GPUs and four NICs: the GPUs of one switch share its NIC") {
  const Dgx dgx;
  std::vector<cni::RailGpu> gpus;
  for (size_t i = 0; i < dgx.gpus.size(); ++i) gpus.push_back({"GPU" + std::to_string(i), dgx.gpus[i]});
  // Names in the opposite order of the switches, so that name order would be wrong.
  const std::vector<cni::RailNic> nics = {
      {"eth1", dgx.nics[3]}, {"eth2", dgx.nics[2]}, {"eth3", dgx.nics[1]}, {"eth4", dgx.nics[0]}};
  auto r = cni::RankRails(gpus, nics);
  REQUIRE(Names(r) == std::vector<std::string>{"eth4", "eth3", "eth2", "eth1"});
  for (size_t i = 0; i < 4; ++i) {
    CHECK(r.nics[i].gpu == "GPU" + std::to_string(2 * i));
    CHECK(r.nics[i].level == PciLevel::kPix);
    CHECK(r.nics[i].round == 1);
  }

  // Two GPUs of one switch: its NIC, then the other switch of the same CPU,
  // then the other CPU's.
  auto two = cni::RankRails({gpus[0], gpus[1]}, nics);
  REQUIRE(Names(two) == std::vector<std::string>{"eth4", "eth3", "eth1", "eth2"});
  CHECK(two.nics[0].gpu == "GPU0");
  CHECK(two.nics[1].gpu == "GPU1");
  CHECK(two.nics[1].level == PciLevel::kPhb);
  CHECK(two.nics[2].level == PciLevel::kSys);
  CHECK(two.nics[2].round == 2);
  CHECK(two.nics[3].round == 2);
}

TEST_CASE("without GPUs the NICs keep name order, digits compared as numbers") {
  const auto l = Loc("/sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0", 0);
  auto r = cni::RankRails(
      {}, {{"eth10", l}, {"eth2", std::nullopt, -1}, {"eth1", std::nullopt, 1}, {"eth01", std::nullopt, -1}});
  CHECK(r.basis == RankBasis::kNoGpu);
  CHECK(Names(r) == std::vector<std::string>{"eth01", "eth1", "eth2", "eth10"});
  CHECK(r.nics[0].gpu.empty());
  CHECK_FALSE(r.nics[0].level);
  CHECK(cni::RankRails({}, {}).nics.empty());
}

TEST_CASE("an unmapped GPU ranks by NUMA node, and an unknown node never counts as a match") {
  const auto on0 = Loc("/sys/devices/pci0000:00/0000:00:02.0/0000:01:00.0", 0);
  const auto on1 = Loc("/sys/devices/pci0000:80/0000:80:02.0/0000:81:00.0", 1);
  const auto unknown = Loc("/sys/devices/pci0000:40/0000:40:02.0/0000:41:00.0", -1);
  const std::vector<cni::RailNic> nics = {
      {"eth0", on0}, {"eth1", unknown}, {"eth2", on1}, {"eth3", std::nullopt, 1}, {"eth4", std::nullopt, -1}};
  auto r = cni::RankRails({{"MIG-a", std::nullopt, 1}}, nics);
  CHECK(r.basis == RankBasis::kTopology);
  REQUIRE(Names(r) == std::vector<std::string>{"eth2", "eth3", "eth0", "eth1", "eth4"});
  CHECK(r.nics[0].level == PciLevel::kPhb);
  CHECK(r.nics[1].level == PciLevel::kPhb);
  CHECK(r.nics[2].level == PciLevel::kSys);
  CHECK(r.nics[3].level == PciLevel::kSys);
  for (const auto& n : r.nics) CHECK(n.numa_only);
  CHECK(r.nics[4].round == 5);

  // The GPU's node unknown: every NIC alike, by name.
  auto blind = cni::RankRails({{"MIG-a", std::nullopt, -1}}, nics);
  CHECK(Names(blind) == std::vector<std::string>{"eth0", "eth1", "eth2", "eth3", "eth4"});
  for (const auto& n : blind.nics) CHECK(n.level == PciLevel::kSys);

  // A located GPU against a NIC without a location compares NUMA nodes too.
  auto mixed =
      cni::RankRails({{"0000:81:00.0", on1}}, {{"eth0", std::nullopt, 0}, {"eth1", std::nullopt, 1}});
  REQUIRE(Names(mixed) == std::vector<std::string>{"eth1", "eth0"});
  CHECK(mixed.nics[0].numa_only);
  CHECK(mixed.nics[0].level == PciLevel::kPhb);
}

TEST_CASE("NICs at one level to a GPU are taken in name order") {
  const std::string port = "/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/0000:3c:01.0";
  auto r =
      cni::RankRails({{"gpu", Loc(port + "/0000:3d:00.0", 0)}},
                     {{"eth10", Loc(port + "/0000:3e:00.1", 0)}, {"eth9", Loc(port + "/0000:3e:00.0", 0)}});
  REQUIRE(Names(r) == std::vector<std::string>{"eth9", "eth10"});
  CHECK(r.nics[0].level == PciLevel::kPix);
  CHECK(r.nics[1].level == PciLevel::kPix);
  CHECK(r.nics[1].round == 2);
}

TEST_CASE("the PCI location of a netdev and of a PCI device is read through sysfs's symlinks") {
  Dir d;
  const std::string& sys = d.path;
  const std::string rel = "devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0";
  Write(sys + "/" + rel + "/numa_node", "1\n");
  fs::create_directories(sys + "/" + rel + "/net/eth1");
  Link("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0",
       sys + "/bus/pci/devices/0000:03:00.0");
  Link("../../" + rel + "/net/eth1", sys + "/class/net/eth1");
  Link("../../../0000:03:00.0", sys + "/" + rel + "/net/eth1/device");
  // A virtio netdev: its device is the virtio child of the PCI function.
  Write(sys + "/devices/pci0000:00/0000:00:03.0/numa_node", "-1\n");
  fs::create_directories(sys + "/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0");
  Link("../../devices/pci0000:00/0000:00:03.0/virtio0/net/eth0", sys + "/class/net/eth0");
  Link("../../../virtio0", sys + "/devices/pci0000:00/0000:00:03.0/virtio0/net/eth0/device");
  // A PCI device of a kernel without NUMA, one with a damaged numa_node, a veth.
  fs::create_directories(sys + "/devices/pci0000:00/0000:00:04.0");
  Link("../../../devices/pci0000:00/0000:00:04.0", sys + "/bus/pci/devices/0000:00:04.0");
  Write(sys + "/devices/pci0000:00/0000:00:07.0/numa_node", "zero\n");
  Link("../../../devices/pci0000:00/0000:00:07.0", sys + "/bus/pci/devices/0000:00:07.0");
  fs::create_directories(sys + "/devices/virtual/net/veth0");
  Link("../../devices/virtual/net/veth0", sys + "/class/net/veth0");
  Link("/tmp", sys + "/class/net/evil");

  auto pci = cni::ReadPciLocation(sys, sys + "/bus/pci/devices/0000:03:00.0");
  REQUIRE(pci.ok());
  CHECK(pci->root == "pci0000:00");
  CHECK(pci->path ==
        std::vector<std::string>{"0000:00:01.0", "0000:01:00.0", "0000:02:08.0", "0000:03:00.0"});
  CHECK(pci->numa == 1);
  auto net = cni::ReadPciLocation(sys, sys + "/class/net/eth1/device");
  REQUIRE(net.ok());
  CHECK(net->path == pci->path);
  CHECK(net->numa == 1);

  auto virtio = cni::ReadPciLocation(sys, sys + "/class/net/eth0/device");
  REQUIRE(virtio.ok());
  CHECK(virtio->path == std::vector<std::string>{"0000:00:03.0"});
  CHECK(virtio->numa == -1);
  CHECK(cni::Level(*virtio, *net) == PciLevel::kSys);

  auto no_numa = cni::ReadPciLocation(sys, sys + "/bus/pci/devices/0000:00:04.0");
  REQUIRE(no_numa.ok());
  CHECK(no_numa->numa == -1);

  auto damaged = cni::ReadPciLocation(sys, sys + "/bus/pci/devices/0000:00:07.0");
  REQUIRE_FALSE(damaged.ok());
  CHECK_THAT(damaged.error().msg,
             Catch::Contains("0000:00:07.0/numa_node reads \"zero\", not -1 or a NUMA node"));

  auto veth = cni::ReadPciLocation(sys, sys + "/class/net/veth0");
  REQUIRE_FALSE(veth.ok());
  CHECK_THAT(veth.error().msg, Catch::Contains("is below no PCI root bus"));

  auto gone = cni::ReadPciLocation(sys, sys + "/class/net/eth9/device");
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().sys_errno == ENOENT);
  CHECK_THAT(gone.error().msg,
             Catch::StartsWith("reading the PCI location of " + sys + "/class/net/eth9/device"));

  auto outside = cni::ReadPciLocation(sys, sys + "/class/net/evil");
  REQUIRE_FALSE(outside.ok());
  CHECK_THAT(outside.error().msg, Catch::Contains("resolves to /tmp, outside"));
}

}  // namespace test_unit_device_pci_distance_test
