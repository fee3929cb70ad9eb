// Finding the node device a config selects.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "conf/config.h"
#include "netlink/rdma_kernel.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// What to look for: one of name, mac, pci, rdma (name and rdma together when a device ID could be either).
struct DeviceQuery {
  std::string name;
  std::string mac;  ///< lower case
  std::string pci;  ///< "0000:3b:00.1"
  /// An RDMA device ("erdma_0", or a device plugin ID "erdma_0/17"): its paired netdev; `name` wins.
  std::string rdma;
  std::string Describe() const;
};

/// A device ID (Multus `deviceID`) may be a PCI address, a MAC, a netdev name or an RDMA device (plugin) ID.
DeviceQuery QueryFor(const conf::DeviceSelector& sel);

/// The node link the query names; nullopt when it is not there. `rdma` is null when the kernel has none.
base::Result<std::optional<netlink::LinkInfo>> FindDevice(netlink::Kernel& host, netlink::Rdma* rdma,
                                                          const DeviceQuery& q,
                                                          const std::string& sysfs_root);

/// The PCI address behind a netdev (/sys/class/net/<if>/device), "" if none.
std::string PciAddressOf(const std::string& sysfs_root, const std::string& ifname);

/// The last component of symlink `path`'s target ("../0000:3b:00.2": "0000:3b:00.2"); nullopt if no symlink.
std::optional<std::string> LinkBase(const std::string& path);

}  // namespace cni
