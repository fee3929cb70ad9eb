// A pool's devices for the pod's GPUs: each GPU located on the PCIe tree (gpus.h), each device's distance to
// it (pci_distance.h), and the devices NCCL would not use passed over.
#pragma once

#include <string>
#include <vector>

#include "cni/device/pci_distance.h"
#include "kubelet/pod_devices.h"
#include "netlink/rdma_kernel.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// The pod's GPUs as RankRails takes them, in the kubelet's order, located through the NVIDIA driver's files
/// and sysfs; one that cannot be (a MIG device, no driver files) keeps the kubelet's NUMA node. `log` gets
/// one line per GPU saying which.
std::vector<RailGpu> LocatePodGpus(const std::vector<kubelet::Device>& gpus, const std::string& ack_gpu_index,
                                   const std::string& sysfs_root, const std::string& procfs_root,
                                   std::vector<std::string>& log);

/// Where `ifname`'s PCI function sits, with its NUMA node; nullopt without one (a veth).
std::optional<PciLocation> NetdevLocation(const std::string& sysfs_root, const std::string& ifname);

/// Why NCCL would not use `link` ("" when it would): up without carrier, or up with its paired RDMA port
/// (`port`, null when none) not ACTIVE. A link that is down tells nothing yet: ADD brings it up in the pod.
std::string WhyUnusable(const netlink::LinkInfo& link, const netlink::RdmaPort* port,
                        const std::string& sysfs_root);

/// What a ranked device's candidate says of it: "PIX to GPU 0000:3b:00.0", or why it ranks by name.
std::string RailWhy(const RankedNic& nic, RankBasis basis, bool gpus_known);

}  // namespace cni
