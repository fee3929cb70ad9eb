// Pieces ADD's modes share (add.cpp, add_vf.cpp). Internal to cni/.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/commands.h"
#include "cni/device.h"
#include "cni/journal.h"
#include "cni/state.h"
#include "cni/vf.h"
#include "ipam/ipam.h"

namespace cni {

/// Our interface's name in the pod: ifName when chained (CNI_IFNAME is the
/// primary's), else CNI_IFNAME.
std::string PodIfName(const Context& ctx);

/// The addresses of an IPAM result; kIpam when there are none.
base::Result<std::vector<ipam::IpConfig>> IpsFromIpam(const nlohmann::json& result);

/// After a failed ADD: undoes the journal; with everything undone, removes
/// the state and returns `err`; otherwise keeps the state for DEL and returns
/// code 102 with what could not be undone.
base::Error RollBack(base::Error err, AttachmentState& st, StepEnv& env, Journal& journal,
                     const StateStore& store, const std::string& path);

/// Mode vf: the VF the config selects. A PCI address goes to sysfs directly;
/// a netdev name, MAC or RDMA device is found on the node first and its PCI
/// address taken from sysfs. nullopt when a selected netdev is not on the
/// node. Code 7 when the device is no VF.
base::Result<std::optional<VfTarget>> FindVfTarget(Context& ctx, netlink::Rdma* rdma, const DeviceQuery& q,
                                                   netlink::Vf& vfs);

/// The error for a VF that has a kernel driver (or none) but no netdev on
/// the node and that no attachment claims.
base::Error VfWithoutNetdev(const Context& ctx, const VfTarget& vf);

/// Mode vf for a VF bound to a user-space driver (vfio-pci): its settings go
/// through the PF, IPAM runs when configured, nothing moves; the result
/// carries the VF's PCI address (pciID, CNI 1.1.0) and IPAM's addresses.
base::Result<nlohmann::json> AddUserspaceVf(Context& ctx, const StateStore& store, const std::string& path,
                                            const VfTarget& vf, netlink::Vf& vfs);

}  // namespace cni
