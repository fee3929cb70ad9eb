// What erdma-cni attached to a pod sandbox, read as the plugin reads its own state (docs/security.md): the
// node's attachment records of that sandbox ID, each naming a dataDir the node file allows, each state read
// and validated by the plugin's own StateStore; the uverbs node of each RDMA device from the kernel's sysfs.
// Nothing a pod or a network config wrote decides which device node a container gets: only what the
// plugin's ADD recorded for that sandbox, and the kernel's numbers for that device.
#pragma once

#include <string>
#include <vector>

#include "conf/node.h"
#include "nri/adjust.h"

namespace nri {

/// The rails of sandbox `sandbox` (CNI_CONTAINERID of its CNI calls) in order: its attachments by interface
/// name, a group's members in the order it attached them. `notes` gets what was passed over and why. A
/// sandbox erdma-cni attached nothing to, or whose ID is no container ID, has none.
PodRdma RailsOf(const conf::NodePolicy& node, const std::string& sandbox, const std::string& sysfs_root,
                std::vector<std::string>* notes);

/// The uverbs node of RDMA device `ibdev`: /dev/infiniband/uverbsN with the numbers sysfs gives for it.
std::optional<DeviceNode> UverbsOf(const std::string& sysfs_root, const std::string& ibdev);
/// /dev/infiniband/rdma_cm with its numbers, when the kernel has it (rdma_ucm loaded).
std::optional<DeviceNode> RdmaCm(const std::string& sysfs_root);

}  // namespace nri
