// Finding the node device a config selects.
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "conf/config.h"
#include "netlink/kernel.h"

namespace cni {

/// What to look for: exactly one field is set.
struct DeviceQuery {
  std::string name;
  std::string mac;  ///< lower case
  std::string pci;  ///< "0000:3b:00.1"
  std::string Describe() const;
};

/// A device ID (Multus `deviceID`, runtimeConfig.deviceID) may be a PCI
/// address, a MAC or a netdev name.
DeviceQuery QueryFor(const conf::DeviceSelector& sel);

/// The node link the query names; nullopt when it is not on the node.
base::Result<std::optional<netlink::LinkInfo>> FindDevice(netlink::Kernel& host, const DeviceQuery& q,
                                                          const std::string& sysfs_root);

/// The PCI address behind a netdev (/sys/class/net/<if>/device), "" if none.
std::string PciAddressOf(const std::string& sysfs_root, const std::string& ifname);

}  // namespace cni
