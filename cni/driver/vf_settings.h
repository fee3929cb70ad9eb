// The SR-IOV side of mode "vf": which VF the config names and the settings ADD applies through its PF
// (journaled with their old values; applying, putting back and checking them: cni/journal/vf_device.h).
#pragma once

#include <optional>
#include <string>

#include "base/error.h"
#include "cni/driver/sriov.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/vf_kernel.h"

namespace cni {

/// A VF ready to be attached: where sysfs puts it, its PF on the node and what the PF says about it now.
struct VfTarget {
  SriovVf sriov;
  netlink::LinkInfo pf;
  netlink::VfState state;
  /// The VF's netdev on the node; nullopt when it has none there: bound to a
  /// user-space driver (sriov.userspace()), or attached elsewhere.
  std::optional<netlink::LinkInfo> netdev;
};

/// Finds the VF at PCI address `pci` (named by config key `key`): sysfs, then
/// its PF on the node and the PF's report on it. kDeviceNotFound when the PF
/// has no netdev on the node or does not report the VF; the errors of FindVf.
base::Result<VfTarget> ResolveVf(netlink::Kernel& host, netlink::Vf& vfs, const std::string& sysfs_root,
                                 const std::string& pci, const std::string& key);

/// The journal step that applies cfg.vf and `mac` to the VF, with the old value of each member it changes.
/// `applied` is empty when the config changes nothing; a VF without a netdev journals the step all the same,
/// as CHECK and DEL know the attachment by it. The rates travel together: one the config leaves unset keeps
/// its current value. A VLAN without vlanQoS gets QoS 0. The IB GUID goes to both the node and the port GUID.
StepVf PlanVf(const conf::Config& cfg, const std::optional<std::string>& mac, const VfTarget& target);

}  // namespace cni
