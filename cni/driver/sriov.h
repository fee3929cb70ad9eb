// SR-IOV discovery in sysfs: from a VF's PCI address to its PF, its number on the PF, its netdev and its
// driver. The sysfs root is a parameter so that unit tests lay out a tree of their own.
#pragma once

#include <cstdint>
#include <string>

#include "base/error.h"

namespace cni {

/// One VF as <sysfs_root>/bus/pci/devices shows it.
struct SriovVf {
  std::string pci;        ///< the VF's PCI address, "0000:3b:00.2"
  std::string pf_pci;     ///< its PF's (the physfn link)
  uint32_t vf = 0;        ///< its number on the PF: the N of the PF's virtfnN link to it
  std::string pf_netdev;  ///< the PF's netdev in this netns (the uplink, not a representor); "" if none
  std::string netdev;     ///< the VF's netdev in this netns; "" when it has none here
  std::string driver;     ///< the bound driver (basename of the driver link); "" when unbound

  /// Bound to a user-space driver (vfio-pci and its variants, uio_pci_generic, igb_uio): no netdev.
  bool userspace() const;
};

/// The VF at PCI address `pci`, which config key `key` named (for messages). kDeviceNotFound when there is no
/// such PCI device or its PF does not list it; code 7 naming `key` when it is not a VF (no physfn: a PF or a
/// plain device, which mode "move" takes).
base::Result<SriovVf> FindVf(const std::string& sysfs_root, const std::string& pci, const std::string& key);

}  // namespace cni
