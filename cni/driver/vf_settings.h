// Mode vf's SR-IOV side: the VF the config names and the settings applied through its PF (vf_device.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/error.h"
#include "cni/driver/sriov.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "conf/modes.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/vf_kernel.h"

namespace cni {

/// The `vf` block: settings applied through the PF before the VF moves; unset = left alone. Its `mac` is the
/// config's MAC (conf::Config::mac).
struct VfOptions : conf::ModeOptions {
  enum class LinkState : uint32_t { kAuto = 0, kEnable = 1, kDisable = 2 };  ///< IFLA_VF_LINK_STATE_*
  std::optional<uint32_t> vlan;                                              ///< 0..4094 (0 = untagged)
  std::optional<uint32_t> vlan_qos;                                          ///< 0..7, needs vlan
  std::optional<bool> spoofchk;
  std::optional<bool> trust;
  std::optional<LinkState> link_state;
  std::optional<uint32_t> min_tx_rate;  ///< Mbps
  std::optional<uint32_t> max_tx_rate;  ///< Mbps, 0 = unlimited
  /// InfiniBand VF node/port GUID "00:11:..:77": vf.infinibandGUID, or runtimeConfig.infinibandGUID.
  std::optional<std::string> ib_guid;
  bool any() const {
    return vlan || vlan_qos || spoofchk || trust || link_state || min_tx_rate || max_tx_rate || ib_guid;
  }
};

/// Parses the `vf` block and runtimeConfig.infinibandGUID (mode vf's ModeSpec::parse).
base::Result<conf::ParsedMode> ParseVfOptions(const conf::ModeInput& in);

/// A VF ready to be attached: where sysfs puts it, its PF on the node and what the PF says about it now.
struct VfTarget {
  SriovVf sriov;
  netlink::LinkInfo pf;
  netlink::VfState state;
  /// The VF's netdev on the node; nullopt when bound to a user-space driver, or attached elsewhere.
  std::optional<netlink::LinkInfo> netdev;
};

/// The VF at PCI address `pci` (named by config key `key`), its PF and the PF's report on it. kDeviceNotFound
/// when the PF has no netdev on the node or does not report the VF; the errors of FindVf.
base::Result<VfTarget> ResolveVf(netlink::Kernel& host, netlink::Vf& vfs, const std::string& sysfs_root,
                                 const std::string& pci, const std::string& key);

/// The step that applies the config's VfOptions and `mac` to the VF, with each changed member's old value
/// (`applied` empty when nothing changes; CHECK and DEL know a VF without a netdev by it all the same). A
/// rate the config leaves unset keeps its value, a VLAN without vlanQoS gets QoS 0, the IB GUID is the node's
/// and the port's.
StepVf PlanVf(const conf::Config& cfg, const std::optional<std::string>& mac, const VfTarget& target);

}  // namespace cni
