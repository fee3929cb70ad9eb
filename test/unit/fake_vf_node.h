// The fixture of the mode vf fake-node tests: the node of fake_node.h with a
// ConnectX-like PF whose VF 0 has a netdev and VF 1 is on vfio-pci, its
// sysfs tree laid out as the kernel does, and a fake PF.
#pragma once

#include <fstream>
#include <sstream>

#include "cni/driver/registry.h"
#include "test/unit/fake_node.h"
#include "test/unit/fake_sysfs.h"

namespace fakenode {

inline constexpr const char* kPfPci = "0000:3b:00.0";
inline constexpr const char* kVfPci = "0000:3b:00.2";     // VF 0, netdev ens1f0v0
inline constexpr const char* kVfioPci = "0000:3b:00.3";   // VF 1, on vfio-pci
inline constexpr const char* kPlainPci = "0000:5e:00.0";  // a NIC without SR-IOV (eth1)

// The node of fake_node.h, with a ConnectX-like PF (ens1f0) whose VF 0 has
// a netdev (ens1f0v0) and VF 1 is bound to vfio-pci.
struct VfNode : Node {
  sysfstest::FakeSysfs sys{dir.path + "/sys"};
  fake::VfWorld vfs{world};
  int pf = 0;
  int vf0 = 0;

  explicit VfNode(fake::VfWorld::PfSpec spec = {}) {
    sysfs_root = sys.root();
    pf = world.AddLink(fake::World::kRoot, {0, "ens1f0", "b8:59:9f:00:00:10", 1500, true, ""});
    vf0 = world.AddLink(fake::World::kRoot, {0, "ens1f0v0", "52:54:00:aa:00:02", 1500, false, ""});
    sys.AddDevice(kPfPci, "mlx5_core");
    sys.AddNetdev(kPfPci, "ens1f0", "p0");
    sys.AddVf(kPfPci, 0, kVfPci, "mlx5_core");
    sys.AddNetdev(kVfPci, "ens1f0v0");
    sys.AddVf(kPfPci, 1, kVfioPci, "vfio-pci");
    sys.AddDevice(kPlainPci, "ixgbe");
    sys.AddNetdev(kPlainPci, "eth1");
    vfs.AddPf(pf, 2, spec);
    vfs.BindNetdev(pf, 0, vf0);
    opener.EnableVf(&vfs);
    world.ClearCalls();
  }

  conf::Config VfConfig(const std::string& device, const std::string& extra = "",
                        const std::string& version = "1.1.0") {
    std::string text = R"({"cniVersion":")" + version +
                       R"(","name":"erdma","type":"erdma-cni","mode":"vf","device":)" + device +
                       R"(,"ipam":{"type":"fake-ipam"},"dataDir":")" + dir.path + "\"" + extra + "}";
    auto cfg = conf::Parse(cni::Modes(), text);
    INFO(text);
    REQUIRE(cfg.ok());
    return *cfg;
  }
  std::string Everything() { return world.Snapshot().Describe() + vfs.Describe(); }
  json StateJson(const std::string& cid = "c1") {
    std::ifstream in(dir.path + "/erdma/" + cni::StateStore::FileName(cid, "net1"));
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
  }
};

inline const std::string kVfDevice = R"({"pci":"0000:3b:00.2"})";
inline const std::string kVfioDevice = R"({"pci":"0000:3b:00.3"})";
inline const std::string kSettings =
    R"(,"vf":{"mac":"02:00:00:3b:00:02","vlan":100,"vlanQoS":2,"spoofchk":false,"trust":true,)"
    R"("linkState":"enable","maxTxRate":1000})";

inline std::optional<netlink::LinkInfo> PodLink(VfNode& n, const char* name) {
  auto link = n.world.Kernel(n.pod_ns)->FindLink(name);
  REQUIRE(link.ok());
  return *link;
}

}  // namespace fakenode
