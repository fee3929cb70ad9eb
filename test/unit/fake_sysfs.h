// A sysfs tree in a temporary directory, laid out the way the kernel lays out
// PCI devices, their SR-IOV links and their netdevs, for code that takes a
// sysfs root: <root>/devices/pci0000:3a/<pci>/ holds each device, with
//   bus/pci/devices/<pci> -> ../../../devices/pci0000:3a/<pci>
//   <vf>/physfn -> ../<pf>,   <pf>/virtfn<N> -> ../<vf>
//   <dev>/driver -> ../../../bus/pci/drivers/<driver>
//   <dev>/net/<if>/ (with device -> ../../../<pci>), class/net/<if> ->
//   ../../devices/pci0000:3a/<pci>/net/<if> <dev>/infiniband/<rdma>/
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace sysfstest {

class FakeSysfs {
 public:
  explicit FakeSysfs(std::string root) : root_(std::move(root)) {
    std::filesystem::create_directories(root_ + "/bus/pci/devices");
    std::filesystem::create_directories(root_ + "/bus/pci/drivers");
    std::filesystem::create_directories(root_ + "/class/net");
  }
  const std::string& root() const { return root_; }

  /// A PCI device, bound to `driver` ("" = unbound).
  void AddDevice(const std::string& pci, const std::string& driver) {
    std::filesystem::create_directories(Dev(pci));
    Link("../../../devices/pci0000:3a/" + pci, root_ + "/bus/pci/devices/" + pci);
    if (!driver.empty()) Bind(pci, driver);
  }
  void Bind(const std::string& pci, const std::string& driver) {
    std::filesystem::create_directories(root_ + "/bus/pci/drivers/" + driver);
    std::filesystem::remove(Dev(pci) + "/driver");
    Link("../../../bus/pci/drivers/" + driver, Dev(pci) + "/driver");
  }
  /// VF number `n` of `pf`.
  void AddVf(const std::string& pf, uint32_t n, const std::string& vf, const std::string& driver) {
    AddDevice(vf, driver);
    Link("../" + pf, Dev(vf) + "/physfn");
    Link("../" + vf, Dev(pf) + "/virtfn" + std::to_string(n));
  }
  /// A netdev of a device; `port` is its phys_port_name ("" = none).
  void AddNetdev(const std::string& pci, const std::string& ifname, const std::string& port = "") {
    const std::string dir = Dev(pci) + "/net/" + ifname;
    std::filesystem::create_directories(dir);
    Link("../../../" + pci, dir + "/device");
    Link("../../devices/pci0000:3a/" + pci + "/net/" + ifname, root_ + "/class/net/" + ifname);
    if (!port.empty()) std::ofstream(dir + "/phys_port_name") << port << "\n";
  }
  /// A virtio-net netdev (every ENI on ECS, every NIC of a VM): its `device` is the virtio device below the
  /// PCI function, devices/.../<pci>/virtio<n>/net/<ifname>.
  void AddVirtioNetdev(const std::string& pci, int virtio, const std::string& ifname) {
    const std::string v = "virtio" + std::to_string(virtio);
    const std::string dir = Dev(pci) + "/" + v + "/net/" + ifname;
    std::filesystem::create_directories(dir);
    Link("../../../" + v, dir + "/device");
    Link("../../devices/pci0000:3a/" + pci + "/" + v + "/net/" + ifname, root_ + "/class/net/" + ifname);
  }
  /// The netdev left this netns (moved into a pod): sysfs no longer shows it here.
  void RemoveNetdev(const std::string& pci, const std::string& ifname) {
    std::filesystem::remove_all(Dev(pci) + "/net/" + ifname);
    std::filesystem::remove(root_ + "/class/net/" + ifname);
  }
  void AddRdma(const std::string& pci, const std::string& rdma) {
    std::filesystem::create_directories(Dev(pci) + "/infiniband/" + rdma);
  }

 private:
  std::string Dev(const std::string& pci) const { return root_ + "/devices/pci0000:3a/" + pci; }
  static void Link(const std::string& target, const std::string& at) {
    std::filesystem::create_directories(std::filesystem::path(at).parent_path());
    REQUIRE(::symlink(target.c_str(), at.c_str()) == 0);
  }
  std::string root_;
};

}  // namespace sysfstest
