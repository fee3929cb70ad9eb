// What erdma-cni attached to a pod sandbox, read as the plugin reads its own state (docs/security.md): the
// node's attachment records of that sandbox ID, each naming a dataDir the node file allows, each state read
// and validated by the plugin's own StateStore; the uverbs node of each RDMA device from the kernel's sysfs.
// Nothing a pod or a network config wrote decides which device node a container gets: only what the
// plugin's ADD recorded for that sandbox, and the kernel's numbers for that device.
#pragma once

#include <string>
#include <vector>

#include "base/error.h"
#include "conf/node.h"
#include "nri/adjust.h"
#include "nri/topology.h"

namespace nri {

/// The rails of sandbox `sandbox` (CNI_CONTAINERID of its CNI calls) in order: its attachments by interface
/// name, a group's members in the order it attached them. `notes` gets what was passed over and why. A
/// sandbox erdma-cni attached nothing to, or whose ID is no container ID, has none.
PodRdma RailsOf(const conf::NodePolicy& node, const std::string& sandbox, const std::string& sysfs_root,
                std::vector<std::string>* notes);

/// The uverbs node of RDMA device `ibdev`: /dev/infiniband/uverbsN with the numbers sysfs gives for it, and
/// where the device's PCI function sits (through the uverbs entry: the node's sysfs lists it even when the
/// device is in a pod's netns).
std::optional<DeviceNode> UverbsOf(const std::string& sysfs_root, const std::string& ibdev,
                                   std::optional<cni::PciLocation>* pci = nullptr);
/// /dev/infiniband/rdma_cm with its numbers, when the kernel has it (rdma_ucm loaded).
std::optional<DeviceNode> RdmaCm(const std::string& sysfs_root);

/// The GPUs container `c` names (ContainerGpuIds), each mapped through the NVIDIA driver's files under
/// `procfs_root` and located under `sysfs_root`; `notes` gets what could not be.
std::vector<TopologyGpu> GpusOf(const Container& c, const std::string& sysfs_root,
                                const std::string& procfs_root, std::vector<std::string>* notes);

/// The topology files the agent writes, one per container, under `dir` (a directory of its own on the
/// node, private as the plugin's data directories are): <dir>/<sandbox>/<container>.xml, mode 0644 for the
/// container's user to read. Both IDs must be container IDs.
base::Result<std::string> WriteTopology(const std::string& dir, const std::string& sandbox,
                                        const std::string& container, const std::string& xml);
/// Removes the files of `sandbox` (its pod is gone).
void RemoveTopologies(const std::string& dir, const std::string& sandbox);
/// Removes the files of every sandbox not in `live` (the runtime's pods when the agent connects).
void KeepTopologies(const std::string& dir, const std::vector<std::string>& live);

}  // namespace nri
