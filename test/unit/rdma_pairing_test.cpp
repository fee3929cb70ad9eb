// Pairing netdevs with RDMA devices on canned device/port lists and a fake
// sysfs tree in a temporary directory.
#include "netlink/rdma_pairing.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace test_unit_rdma_pairing_test {

namespace {

namespace fs = std::filesystem;
using netlink::LinkInfo;
using netlink::PairMatch;
using netlink::RdmaDevice;
using netlink::RdmaDeviceId;
using netlink::RdmaPort;

/// `<tmp>/class/net/<if>/device/infiniband/<dev>` trees, removed at the end.
class FakeSysfs {
 public:
  FakeSysfs() {
    static int counter = 0;
    root_ = fs::temp_directory_path() /
            ("ecni-rdma-sysfs-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(root_);
  }
  ~FakeSysfs() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeSysfs(const FakeSysfs&) = delete;
  FakeSysfs& operator=(const FakeSysfs&) = delete;

  void Pair(const std::string& netdev, const std::string& ibdev) {
    fs::create_directories(root_ / "class" / "net" / netdev / "device" / "infiniband" / ibdev);
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

LinkInfo Link(int index, const std::string& name, const std::string& mac) {
  LinkInfo l;
  l.index = index;
  l.name = name;
  l.mac = mac;
  return l;
}

RdmaDevice Device(uint32_t index, const std::string& name, const std::string& guid) {
  return RdmaDevice{index, name, guid, 1, "roce"};
}

RdmaPort Port(const RdmaDevice& d, uint32_t netdev_index = 0, const std::string& netdev_name = "") {
  return RdmaPort{
      d.index, d.name, 1, netdev_index, netdev_name, netlink::kPortStateActive, netlink::kPhysStateLinkUp};
}

}  // namespace

TEST_CASE("the eRDMA GUID is the MAC with bit 0x02 of the first byte flipped and ff:fe in the middle",
          "[rdma]") {
  CHECK(netlink::GuidFromMac("00:16:3e:10:f8:b0") == "0216:3eff:fe10:f8b0");
  CHECK(netlink::GuidFromMac("00:16:3E:10:F8:B0") == "0216:3eff:fe10:f8b0");
  CHECK(netlink::GuidFromMac("02:00:00:00:00:01") == "0000:00ff:fe00:0001");
  CHECK(netlink::MacFromGuid("0216:3eff:fe10:f8b0") == "00:16:3e:10:f8:b0");
  CHECK(netlink::MacFromGuid("0216:3EFF:FE10:F8B0") == "00:16:3e:10:f8:b0");
  CHECK(netlink::MacFromGuid(netlink::GuidFromMac("fe:ed:fa:ce:00:11")) == "fe:ed:fa:ce:00:11");
}

TEST_CASE("text that is not a MAC or an EUI-64 GUID gives no GUID or MAC", "[rdma]") {
  for (const char* bad : {"", "00:16:3e:10:f8", "00:16:3e:10:f8:b0:11", "00-16-3e-10-f8-b0", "0016:3e10:f8b0",
                          "00:16:3e:10:f8:bg", "000:16:3e:10:f8:b"}) {
    INFO(bad);
    CHECK(netlink::GuidFromMac(bad).empty());
  }
  // A GUID without ff:fe in the middle was not made from a MAC.
  CHECK(netlink::MacFromGuid("0216:3e00:0010:f8b0").empty());
  CHECK(netlink::MacFromGuid("0216:3eff:fe10").empty());
  CHECK(netlink::MacFromGuid("0216-3eff-fe10-f8b0").empty());
}

TEST_CASE("pairing tries the port's netdev, then sysfs, then the eRDMA GUID rule", "[rdma]") {
  FakeSysfs sysfs;
  const LinkInfo eth1 = Link(5, "eth1", "00:16:3e:10:f8:b0");
  const RdmaDevice by_port = Device(1, "mlx5_0", "aaaa:aaaa:aaaa:aaaa");
  const RdmaDevice by_sysfs = Device(2, "mlx5_1", "bbbb:bbbb:bbbb:bbbb");
  const RdmaDevice by_guid = Device(3, "erdma_0", "0216:3eff:fe10:f8b0");
  const std::vector<RdmaDevice> devices{by_guid, by_sysfs, by_port};
  sysfs.Pair("eth1", "mlx5_1");

  auto m = netlink::PairNetdev(eth1, devices, {Port(by_port, 5, "eth1"), Port(by_sysfs), Port(by_guid)},
                               sysfs.root());
  REQUIRE(m);
  CHECK(*m == PairMatch{by_port, Port(by_port, 5, "eth1"), "port-netdev"});

  m = netlink::PairNetdev(eth1, devices, {Port(by_port), Port(by_sysfs), Port(by_guid)}, sysfs.root());
  REQUIRE(m);
  CHECK(*m == PairMatch{by_sysfs, Port(by_sysfs), "sysfs"});

  m = netlink::PairNetdev(eth1, devices, {Port(by_port), Port(by_sysfs), Port(by_guid)}, "");
  REQUIRE(m);
  CHECK(*m == PairMatch{by_guid, Port(by_guid), "erdma-guid"});

  CHECK_FALSE(netlink::PairNetdev(Link(5, "eth1", "00:16:3e:10:f8:b1"), devices, {}, ""));
}

TEST_CASE("the port rule matches the netdev's index, and its name only when the port has no index",
          "[rdma]") {
  const RdmaDevice d = Device(1, "mlx5_0", "");
  // Another link that happens to have the name the port shows.
  CHECK_FALSE(netlink::PairNetdev(Link(7, "eth1", ""), {d}, {Port(d, 5, "eth1")}, ""));
  auto by_name = netlink::PairNetdev(Link(7, "eth1", ""), {d}, {Port(d, 0, "eth1")}, "");
  REQUIRE(by_name);
  CHECK(by_name->how == "port-netdev");
  // A port without a netdev pairs with nothing, not with every link.
  CHECK_FALSE(netlink::PairNetdev(Link(7, "", ""), {d}, {Port(d)}, ""));
}

TEST_CASE("sysfs pairing follows the device list and ignores entries that are no listed device", "[rdma]") {
  FakeSysfs sysfs;
  sysfs.Pair("eth1", "mlx5_9");
  sysfs.Pair("eth1", "mlx5_1");
  const RdmaDevice a = Device(1, "mlx5_1", "");
  auto m = netlink::PairNetdev(Link(5, "eth1", ""), {a}, {}, sysfs.root());
  REQUIRE(m);
  CHECK(m->device == a);
  // No listed port: port 1 of the device, nothing else known.
  CHECK(m->port == RdmaPort{1, "mlx5_1", 1, 0, "", 0, 0});
  CHECK_FALSE(netlink::PairNetdev(Link(6, "eth2", ""), {a}, {}, sysfs.root()));
  CHECK_FALSE(netlink::PairNetdev(Link(6, "../eth1", ""), {a}, {}, sysfs.root() + "/class/net/x"));
}

TEST_CASE("the GUID rule ignores case and reports the device's first port", "[rdma]") {
  const RdmaDevice d{3, "erdma_0", "0216:3EFF:FE10:F8B0", 2, "roce"};
  RdmaPort p2 = Port(d);
  p2.port = 2;
  auto m = netlink::PairNetdev(Link(5, "eth1", "00:16:3e:10:f8:b0"), {d}, {p2, Port(d)}, "");
  REQUIRE(m);
  CHECK(m->how == "erdma-guid");
  CHECK(m->port.port == 1);
}

TEST_CASE("an RDMA deviceID is a device name, optionally with a slash and an instance number", "[rdma]") {
  CHECK(netlink::ParseRdmaDeviceId("erdma_0") == RdmaDeviceId{"erdma_0", std::nullopt});
  CHECK(netlink::ParseRdmaDeviceId("erdma_0/17") == RdmaDeviceId{"erdma_0", 17});
  CHECK(netlink::ParseRdmaDeviceId("erdma_0/0") == RdmaDeviceId{"erdma_0", 0});
  for (const char* bad :
       {"", "/17", "erdma_0/", "erdma_0/x", "erdma_0/1/2", "erdma_0/-1", "erdma 0", "erdma_0/99999999999"}) {
    INFO(bad);
    CHECK_FALSE(netlink::ParseRdmaDeviceId(bad));
  }
}

TEST_CASE("the netdev of erdma_0 is found from the name and from the deviceID erdma_0/17 alike", "[rdma]") {
  const std::vector<LinkInfo> links{Link(1, "lo", "00:00:00:00:00:00"), Link(4, "eth0", "00:16:3e:00:00:01"),
                                    Link(5, "eth1", "00:16:3e:10:f8:b0")};
  const std::vector<RdmaDevice> devices{Device(1, "erdma_1", "0216:3eff:fe00:0001"),
                                        Device(2, "erdma_0", "0216:3eff:fe10:f8b0")};
  for (const char* id : {"erdma_0", "erdma_0/17"}) {
    INFO(id);
    auto m = netlink::FindNetdevForRdma(id, links, devices, {}, "");
    REQUIRE(m);
    CHECK(m->netdev == links[2]);
    CHECK(m->pair.device == devices[1]);
    CHECK(m->pair.how == "erdma-guid");
  }
  CHECK_FALSE(netlink::FindNetdevForRdma("erdma_7", links, devices, {}, ""));
  CHECK_FALSE(netlink::FindNetdevForRdma("erdma_0/x", links, devices, {}, ""));
}

TEST_CASE("the reverse lookup tries each rule on every link before the next rule", "[rdma]") {
  // eth0 comes first and matches by GUID, but eth1 is the port's netdev.
  const std::vector<LinkInfo> links{Link(4, "eth0", "00:16:3e:10:f8:b0"),
                                    Link(5, "eth1", "00:16:3e:00:00:02")};
  const RdmaDevice d = Device(2, "erdma_0", "0216:3eff:fe10:f8b0");
  auto m = netlink::FindNetdevForRdma("erdma_0", links, {d}, {Port(d, 5, "eth1")}, "");
  REQUIRE(m);
  CHECK(m->netdev.name == "eth1");
  CHECK(m->pair.how == "port-netdev");
}

}  // namespace test_unit_rdma_pairing_test
