// Mode vf with the real binary and the real sysfs. There is no SR-IOV
// hardware here, so what runs end to end is the refusal of what is no VF:
// a netdev without a PCI device, a PCI device that does not exist, and a
// real PCI device without a physfn link. Each leaves the node, the pod and
// the data dir as they were. The VF path itself is the move path
// (plugin_move_test.cpp) plus the PF messages (vf_socket_test.cpp).
#include <dirent.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "test/kernel/harness.h"
#include "test/kernel/skip.h"

namespace test_kernel_plugin_vf_test {

using nlohmann::json;

namespace {

/// A PCI device of this machine that is not an SR-IOV VF; "" when none.
std::string SomePciDeviceThatIsNoVf() {
  const std::string dir = "/sys/bus/pci/devices";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return "";
  std::string found;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string physfn = dir + "/" + e->d_name + "/physfn";
    if (::access(physfn.c_str(), F_OK) != 0) {
      found = e->d_name;
      break;
    }
  }
  ::closedir(d);
  return found;
}

void RunRefused(kt::Topology& t, const std::string& version, const json& device, int code,
                const std::vector<std::string>& msg_any) {
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string cid = t.ContainerId("vf");
  json config = kt::PluginConfig({.cni_version = version,
                                  .device = "",
                                  .data_dir = t.DataDir(),
                                  .log_file = t.LogFile(),
                                  .addresses = "inherit",
                                  .extra = {{"mode", "vf"}, {"device", device}, {"vf", {{"vlan", 10}}}}});
  kt::PluginResult r = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO(kt::Describe(r));
  kt::CheckError(r, code, msg_any);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

}  // namespace

TEST_CASE("mode vf refuses a netdev that is no PCI device, naming the key and mode move", "[vf]") {
  const std::string version = GENERATE(from_range(kt::kVersions));
  CAPTURE(version);
  kt::Topology t;
  RunRefused(t, version, {{"name", "eth1"}}, 7, {"device.name \"eth1\": eth1 is not a PCI device"});
}

TEST_CASE("mode vf with a PCI address the node does not have is device-not-found", "[vf]") {
  kt::Topology t;
  RunRefused(t, "1.1.0", {{"pci", "0000:ff:1f.7"}}, 100, {"no PCI device 0000:ff:1f.7"});
}

TEST_CASE("mode vf refuses a real PCI device that is no VF, through the deviceID Multus passes", "[vf]") {
  const std::string pci = SomePciDeviceThatIsNoVf();
  if (pci.empty()) {
    KT_SKIP("this machine has no PCI device without a physfn link in /sys/bus/pci/devices");
  }
  kt::Topology t;
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string cid = t.ContainerId("vf");
  json config = kt::PluginConfig({.cni_version = "1.0.0",
                                  .device = "",
                                  .data_dir = t.DataDir(),
                                  .log_file = t.LogFile(),
                                  .addresses = "inherit",
                                  .extra = {{"mode", "vf"}, {"deviceID", pci}}});
  kt::PluginResult r = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO(kt::Describe(r));
  kt::CheckError(r, 7, {"deviceID \"" + pci + "\": " + pci + " is not an SR-IOV VF"});
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::ClaimsFor(t.DataDir(), cid).empty());
}

}  // namespace test_kernel_plugin_vf_test
